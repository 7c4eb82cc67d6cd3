/**
 * Issue 23.5, adr/0064: `signalWithStart` starts an execution with its signal carried in seq 0
 * (one append: nothing half-done after a crash), or signals the execution that exists. Racing
 * calls start it once and lose no signal; a retry with the same `signalId` is a duplicate; bad
 * input or a bad signal writes nothing.
 */
import {
  createClient,
  createRuntime,
  defineWorkflow,
  ExecutionFinishedError,
  InvalidInputError,
  type Runtime,
  type RuntimeOptions,
  type Stores,
  UnknownSignalError,
} from '@skein/workflow-runtime';
import { afterEach, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { realStores } from './support/real-stores.js';

/** Collects `count` signals `add`, then waits 300 ms more for one too many. */
const collector = defineWorkflow({
  name: 'collector',
  input: z.object({ count: z.number().int() }),
  signals: { add: z.string() },
  async run(ctx, { count }) {
    const items: string[] = [];
    while (items.length < count) items.push(await ctx.waitForSignal('add'));
    const extra = await ctx.waitForSignal('add', { timeoutMs: 300 });
    return { items, extra: extra ?? null };
  },
});

async function until(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.each(realStores)('signalWithStart (%s store)', (_, openStores) => {
  const opened: Stores[] = [];
  const runtimes: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
    await Promise.all(opened.splice(0).map((stores) => stores.close()));
  });
  async function storesOf(): Promise<Stores> {
    const stores = await openStores();
    opened.push(stores);
    return stores;
  }
  function runtimeOf(options: RuntimeOptions): Runtime {
    const runtime = createRuntime({ onError: () => undefined, ...options });
    runtimes.push(runtime);
    return runtime;
  }

  test('a missing execution starts with the signal in seq 0: one append, no inbox row', async () => {
    const stores = await storesOf();
    const runtime = runtimeOf({ stores, workflows: [collector] });
    const handle = await runtime.signalWithStart(
      collector,
      { count: 1 },
      { name: 'add', payload: 'apple', signalId: 's-1' },
      { executionId: 'sws-1' },
    );
    expect(handle.executionId).toBe('sws-1');
    const [first] = await runtime.history('sws-1');
    expect(first?.type === 'EXECUTION_STARTED' && first.payload.signals).toEqual([
      expect.objectContaining({ signalId: 's-1', name: 'add' }),
    ]);
    expect(await stores.signals.pending('sws-1', { names: ['add'], limit: 10 })).toEqual([]);
    expect(await handle.result()).toEqual({ items: ['apple'], extra: null });
    const received = (await runtime.history('sws-1')).find((event) => event.type === 'SIGNAL_RECEIVED');
    expect(received?.payload).toMatchObject({ signalId: 's-1', payload: 'apple' });
  });

  test('an execution that exists is only signalled; a retry with the same signalId is a duplicate', async () => {
    const stores = await storesOf();
    const runtime = runtimeOf({ stores, workflows: [collector] });
    const add = (payload: string, signalId: string) =>
      runtime.signalWithStart(
        collector,
        { count: 2 },
        { name: 'add', payload, signalId },
        { executionId: 'sws-2' },
      );
    await add('apple', 'a');
    await add('apple', 'a'); // the caller retried: carried in seq 0 already
    await add('pear', 'p');
    await add('pear', 'p'); // retried again: in the inbox (or consumed) already
    const starts = (await runtime.history('sws-2')).filter((event) => event.type === 'EXECUTION_STARTED');
    expect(starts).toHaveLength(1);
    expect(await runtime.result('sws-2')).toEqual({ items: ['apple', 'pear'], extra: null });
    await expect(add('plum', 'q')).rejects.toBeInstanceOf(ExecutionFinishedError);
  });

  test('racing calls on two runtimes start the execution once and lose no signal', async () => {
    const stores = await storesOf();
    const a = runtimeOf({ stores, workflows: [collector] });
    const b = runtimeOf({ stores, workflows: [collector] });
    const fruits = Array.from({ length: 8 }, (_, i) => `fruit-${i}`);
    await Promise.all(
      fruits.map((fruit, i) =>
        (i % 2 === 0 ? a : b).signalWithStart(
          collector,
          { count: fruits.length },
          { name: 'add', payload: fruit },
          { executionId: 'sws-race' },
        ),
      ),
    );
    await until(async () => (await a.loadState('sws-race'))?.status === 'completed');
    const output = (await a.loadState('sws-race'))?.output as { items: string[]; extra: unknown };
    expect(output.items.slice().sort()).toEqual(fruits);
    expect(output.extra).toBeNull();
    const log = await a.history('sws-race');
    expect(log.filter((event) => event.type === 'EXECUTION_STARTED')).toHaveLength(1);
  });

  test('from a client: seq 0 with the signal is left pending, and a node runs it', async () => {
    const stores = await storesOf();
    const client = createClient({ stores, workflows: [collector] });
    runtimes.push(client);
    await client.signalWithStart(
      collector,
      { count: 1 },
      { name: 'add', payload: 'fig' },
      { executionId: 'sws-c' },
    );
    expect((await client.loadState('sws-c'))?.status).toBe('pending');
    const node = runtimeOf({ stores, workflows: [collector], maintenance: { intervalMs: 50 } });
    await until(async () => (await node.loadState('sws-c'))?.status === 'completed');
    expect((await node.loadState('sws-c'))?.output).toEqual({ items: ['fig'], extra: null });
  });

  test('L7: an undeclared signal, a bad payload or a bad input writes nothing', async () => {
    const stores = await storesOf();
    const runtime = runtimeOf({ stores, workflows: [collector], maintenance: false });
    const start = (input: unknown, signal: unknown) =>
      runtime.signalWithStart(collector, input as never, signal as never, { executionId: 'sws-bad' });
    await expect(start({ count: 1 }, { name: 'remove', payload: 'x' })).rejects.toBeInstanceOf(
      UnknownSignalError,
    );
    await expect(start({ count: 1 }, { name: 'add', payload: 42 })).rejects.toThrow(
      /signal "add" of execution "sws-bad" is invalid: payload/,
    );
    await expect(start({ count: 1 }, { name: '', payload: 'x' })).rejects.toThrow(
      /signalWithStart signal is invalid: signal\.name/,
    );
    await expect(start({ count: 'one' }, { name: 'add', payload: 'x' })).rejects.toBeInstanceOf(
      InvalidInputError,
    );
    await expect(start({ count: 1 }, undefined)).rejects.toBeInstanceOf(InvalidInputError);
    expect(await runtime.loadState('sws-bad')).toBeNull();
    expect(await stores.signals.pending('sws-bad', { names: ['add', 'remove'], limit: 10 })).toEqual([]);
  });
});
