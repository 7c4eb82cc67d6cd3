/**
 * Issue #23 item 4 / adr/0063: `ctx.continueAsNew` ends an execution `continued` and goes on in
 * a successor with its own log; signals carry over (also one racing the continue), handles,
 * `result()`, signals and updates follow the chain, and `ctx.historySize()` replays. On every
 * real store.
 */
import {
  createClient,
  createRuntime,
  defineWorkflow,
  ExecutionAlreadyExistsError,
  ExecutionFailedError,
  type ExecutionState,
  InvalidInputError,
  type Runtime,
  type Stores,
} from '@skein/workflow-runtime';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type OpenStores, realStores } from './support/real-stores.js';

const counter = defineWorkflow({
  name: 'counter',
  version: 1,
  input: z.object({
    total: z.number().int().nonnegative(),
    done: z.number().int().nonnegative(),
    every: z.number().int().positive(),
  }),
  async run(ctx, { total, done, every }) {
    let count = done;
    while (count < total) {
      count = await ctx.step('count', () => count + 1);
      if (count % every === 0 && count < total) await ctx.continueAsNew({ total, done: count, every });
    }
    return count;
  },
});

/** Sums `goal` signals, continuing after every `every` of them. */
const summer = defineWorkflow({
  name: 'summer',
  version: 1,
  input: z.object({ sum: z.number(), seen: z.number(), goal: z.number(), every: z.number() }),
  signals: { add: z.number() },
  async run(ctx, { sum, seen, goal, every }) {
    let total = sum;
    for (let n = seen; n < goal; ) {
      total += await ctx.waitForSignal('add');
      n += 1;
      if (n % every === 0 && n < goal) await ctx.continueAsNew({ sum: total, seen: n, goal, every });
    }
    return total;
  },
});

const cart = defineWorkflow({
  name: 'cart',
  version: 1,
  input: z.object({ items: z.array(z.string()), round: z.number() }),
  updates: { add: z.string() },
  signals: { next: z.literal(true), done: z.literal(true) },
  async run(ctx, { items, round }) {
    const held = [...items];
    ctx.onUpdate('add', (item: string) => {
      held.push(item);
      return `${round}:${held.length}`;
    });
    const which = await Promise.race([
      ctx.waitForSignal('next').then(() => 'next' as const),
      ctx.waitForSignal('done').then(() => 'done' as const),
    ]);
    if (which === 'next') await ctx.continueAsNew({ items: held, round: round + 1 });
    return held;
  },
});

const refusing = defineWorkflow({
  name: 'refusing',
  version: 1,
  input: z.object({ n: z.number().int() }),
  async run(ctx, { n }) {
    if (n > 0) return n;
    try {
      await ctx.continueAsNew({ n: 'not a number' });
    } catch (error) {
      return (error as Error).name;
    }
    return 'unreachable';
  },
});

const measuring = defineWorkflow({
  name: 'measuring',
  version: 1,
  input: z.object({}),
  async run(ctx) {
    await ctx.step('a', () => 'x'.repeat(100));
    const first = await ctx.historySize();
    await ctx.sleep('nap', 10);
    const second = await ctx.historySize();
    return { first, second };
  },
});

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`not settled within ${ms} ms`)), ms)),
  ]);
}

const parent = defineWorkflow({
  name: 'parent',
  version: 1,
  input: z.object({}),
  async run(ctx) {
    return ctx.child(counter, { total: 6, done: 0, every: 2 });
  },
});

async function chainOf(runtime: Runtime, root: string): Promise<ExecutionState[]> {
  const chain: ExecutionState[] = [];
  let id: string | undefined = root;
  while (id !== undefined) {
    const state: ExecutionState | null = await runtime.loadState(id);
    if (state === null) break;
    chain.push(state);
    id = state.continuedAs;
  }
  return chain;
}

describe.each(realStores)('continue-as-new on %s', (_name, open: OpenStores) => {
  let stores: Stores;
  let runtime: Runtime;
  beforeEach(async () => {
    stores = await open();
    runtime = createRuntime({ stores, workflows: [counter, summer, cart, refusing, measuring, parent] });
  });
  afterEach(async () => {
    await runtime.close();
    await stores.close();
  });

  it('a counting loop continues every 4 steps for 6 generations; result() of the first id is the last output', async () => {
    const handle = await runtime.start(counter, { total: 24, done: 0, every: 4 }, { executionId: 'count-1' });
    expect(await handle.result()).toBe(24);
    const chain = await chainOf(runtime, 'count-1');
    expect(chain.map((state) => state.executionId)).toEqual([
      'count-1',
      'count-1~1',
      'count-1~2',
      'count-1~3',
      'count-1~4',
      'count-1~5',
    ]);
    expect(chain.map((state) => state.status)).toEqual([...Array(5).fill('continued'), 'completed']);
    for (const [i, state] of chain.entries()) {
      const log = await runtime.history(state.executionId);
      // Its own log from seq 0, bounded: 4 steps (2 events each) between start and end.
      expect(log[0]).toMatchObject({ seq: 0, type: 'EXECUTION_STARTED' });
      expect(log.filter((event) => event.type === 'STEP_COMPLETED')).toHaveLength(4);
      expect(log.length).toBeLessThanOrEqual(12);
      if (i > 0)
        expect(state.continuedFrom).toEqual({
          executionId: chain[i - 1]!.executionId,
          root: 'count-1',
          generation: i,
        });
      if (i < chain.length - 1) {
        const last = log.at(-1)!;
        expect(last.type).toBe('EXECUTION_CONTINUED');
        expect(last.payload).toMatchObject({ successorId: chain[i + 1]!.executionId });
      }
    }
    expect(await runtime.result('count-1~2')).toBe(24);
    const listed = await runtime.list({ status: 'continued', workflow: 'counter' });
    expect(listed.items.map((item) => item.executionId)).toEqual(chain.slice(0, 5).map((s) => s.executionId));
  });

  it('signals sent to the first id while the chain continues all reach a run, each consumed once', async () => {
    const handle = await runtime.start(
      summer,
      { sum: 0, seen: 0, goal: 30, every: 3 },
      { executionId: 'sum-1' },
    );
    // Sent as fast as the inbox takes them: many land while a run is continuing.
    await Promise.all(Array.from({ length: 30 }, (_, i) => runtime.signal('sum-1', 'add', i + 1)));
    expect(await handle.result()).toBe((30 * 31) / 2);
    const chain = await chainOf(runtime, 'sum-1');
    expect(chain).toHaveLength(10);
    let received = 0;
    for (const state of chain)
      received += (await runtime.history(state.executionId)).filter(
        (e) => e.type === 'SIGNAL_RECEIVED',
      ).length;
    expect(received).toBe(30);
  });

  it('a signal written into the old inbox after the hand-over (a sender that read the status before the continue) reaches the successor', async () => {
    // The sender is slow: its write lands only once the execution it read has continued.
    const slow: Stores = {
      ...stores,
      signals: {
        ...stores.signals,
        pending: (id, query) => stores.signals.pending(id, query),
        complete: (id, signalId) => stores.signals.complete(id, signalId),
        clear: (id) => stores.signals.clear(id),
        async send(signal, options) {
          if (signal.executionId === 'race-1' && signal.signalId === 'late') {
            for (let i = 0; i < 500; i++) {
              const summary = await stores.events.getExecution('race-1');
              if (summary?.status === 'continued') break;
              await new Promise((resolve) => setTimeout(resolve, 5));
            }
            // The continuing run has moved the inbox by now (its hand-over runs right after the end).
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
          return stores.signals.send(signal, options);
        },
      },
    };
    const racing = createRuntime({ stores: slow, workflows: [summer], maintenance: false });
    try {
      const handle = await racing.start(
        summer,
        { sum: 0, seen: 0, goal: 3, every: 2 },
        { executionId: 'race-1' },
      );
      await racing.signal('race-1', 'add', 1);
      // Read while race-1 waits for its second signal; written after it continued.
      const late = racing.signal('race-1', 'add', 100, { signalId: 'late' });
      await new Promise((resolve) => setTimeout(resolve, 20));
      await racing.signal('race-1', 'add', 10);
      await late;
      // Lost, the successor would wait for it forever.
      expect(await within(handle.result(), 5_000)).toBe(111);
      const successor = await racing.history('race-1~1');
      expect(
        successor
          .filter((e) => e.type === 'SIGNAL_RECEIVED')
          .map((e) => (e.payload as { signalId: string }).signalId),
      ).toContain('late');
    } finally {
      await racing.close();
    }
  });

  it('a hand-over cut short after the end (the process died) is finished by the maintenance that claims the pending successor', async () => {
    // No maintenance here until the last node: the pending work waits for the node that claims it.
    await runtime.close();
    const sender = createRuntime({ stores, workflows: [summer], maintenance: false });
    await sender.enqueue(summer, { sum: 0, seen: 0, goal: 2, every: 1 }, { executionId: 'adopt-1' });
    await sender.signal('adopt-1', 'add', 1);
    await sender.signal('adopt-1', 'add', 2);
    await sender.close();
    // This node dies right after EXECUTION_CONTINUED: its hand-over never reads the old inbox.
    const dying = createRuntime({
      stores: {
        ...stores,
        signals: {
          ...stores.signals,
          send: (signal, options) => stores.signals.send(signal, options),
          complete: (id, signalId) => stores.signals.complete(id, signalId),
          clear: (id) => stores.signals.clear(id),
          async pending(id, query) {
            if (id === 'adopt-1' && (await stores.events.getExecution(id))?.status === 'continued')
              throw new Error('the process died here');
            return stores.signals.pending(id, query);
          },
        },
      },
      workflows: [summer],
      maintenance: false,
    });
    await expect(dying.execute({ executionId: 'adopt-1', workflow: 'summer' })).rejects.toThrow(/died here/);
    await dying.close();
    expect(await stores.events.getExecution('adopt-1~1')).toMatchObject({ status: 'pending' });
    expect((await stores.signals.pending('adopt-1')).map((signal) => signal.payload)).toEqual(['2']);
    // Another node's maintenance claims the pending successor; the claim takes the stranded signal.
    runtime = createRuntime({ stores, workflows: [summer] });
    await runtime.maintain();
    expect(await within(runtime.result('adopt-1'), 5_000)).toBe(3);
  });

  it('an update sent to the first id after the continue reaches the current run and returns its result', async () => {
    await runtime.start(cart, { items: [], round: 0 }, { executionId: 'cart-1' });
    expect(await runtime.update('cart-1', 'add', 'apple', { updateId: 'u1' })).toBe('0:1');
    await runtime.signal('cart-1', 'next', true);
    for (let i = 0; i < 200 && (await runtime.loadState('cart-1'))?.status !== 'continued'; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await runtime.update('cart-1', 'add', 'pear', { updateId: 'u2' })).toBe('1:2');
    // A repeated id returns the result the chain recorded, from whichever run applied it.
    expect(await runtime.update('cart-1', 'add', 'apple', { updateId: 'u1' })).toBe('0:1');
    await runtime.signal('cart-1', 'done', true);
    expect(await runtime.result('cart-1')).toEqual(['apple', 'pear']);
    const old = await runtime.loadState('cart-1');
    expect(old).toMatchObject({ status: 'continued', continuedAs: 'cart-1~1' });
  });

  it('a cancel sent to the first id after the continue cancels the current run', async () => {
    await runtime.start(cart, { items: [], round: 0 }, { executionId: 'cart-c' });
    await runtime.signal('cart-c', 'next', true);
    for (let i = 0; i < 200 && (await runtime.loadState('cart-c~1'))?.status !== 'suspended'; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await runtime.cancel('cart-c', 'not needed')).toMatchObject({ cancelled: true });
    const failure = await runtime.result('cart-c').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ExecutionFailedError);
    expect((failure as ExecutionFailedError).status).toBe('cancelled');
    expect(await runtime.loadState('cart-c')).toMatchObject({ status: 'continued', continuedAs: 'cart-c~1' });
    expect(await runtime.loadState('cart-c~1')).toMatchObject({ status: 'cancelled' });
    // The chain ended: a second cancel of the first id finds its current run finished.
    expect(await runtime.cancel('cart-c', 'again')).toEqual({ cancelled: false, status: 'cancelled' });
  });

  it("a client's cancel of the first id after the continue records the request in the current run", async () => {
    await runtime.start(cart, { items: [], round: 0 }, { executionId: 'cart-k' });
    await runtime.signal('cart-k', 'next', true);
    for (let i = 0; i < 200 && (await runtime.loadState('cart-k~1'))?.status !== 'suspended'; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await createClient({ stores }).cancel('cart-k', 'not needed')).toMatchObject({ cancelled: true });
    expect((await runtime.loadState('cart-k~1'))?.cancel).toMatchObject({ reason: 'not needed' });
    expect((await runtime.loadState('cart-k'))?.cancel).toBeUndefined();
  });

  it("a child that continues keeps its parent, which gets the output of the chain's last run", async () => {
    const handle = await runtime.start(parent, {}, { executionId: 'parent-1' });
    expect(await within(handle.result(), 10_000)).toBe(6);
    const chain = await chainOf(runtime, 'parent-1-child-0');
    expect(chain.map((state) => [state.executionId, state.status, state.parentId])).toEqual([
      ['parent-1-child-0', 'continued', 'parent-1'],
      ['parent-1-child-0~1', 'continued', 'parent-1'],
      ['parent-1-child-0~2', 'completed', 'parent-1'],
    ]);
  });

  it('L7: a continue with an input the schema refuses throws in the body and writes nothing', async () => {
    const handle = await runtime.start(refusing, { n: 0 }, { executionId: 'refuse-1' });
    expect(await handle.result()).toBe(InvalidInputError.name);
    expect(await stores.events.getExecution('refuse-1~1')).toBeNull();
    const types = (await runtime.history('refuse-1')).map((e) => e.type);
    expect(types).not.toContain('EXECUTION_CONTINUED');
    expect(types.at(-1)).toBe('EXECUTION_COMPLETED');
  });

  it('an id taken by an execution that is not the successor fails the continuing execution', async () => {
    await runtime.start(counter, { total: 1, done: 0, every: 1 }, { executionId: 'taken~1' });
    const handle = await runtime.start(counter, { total: 2, done: 0, every: 1 }, { executionId: 'taken' });
    await expect(handle.result()).rejects.toThrow(/failed/);
    const state = await runtime.loadState('taken');
    expect(state?.status).toBe('failed');
    expect(state?.error).toBeInstanceOf(ExecutionAlreadyExistsError);
  });

  it('ctx.historySize() gives the log at the call, and a replay after a suspension gets the same values', async () => {
    const handle = await runtime.start(measuring, {}, { executionId: 'measure-1' });
    const output = (await handle.result()) as {
      first: { length: number; bytes: number };
      second: { length: number };
    };
    const log = await runtime.history('measure-1');
    // STARTED, STEP_STARTED, STEP_COMPLETED: three events before the first call.
    expect(output.first.length).toBe(3);
    expect(output.first.bytes).toBeGreaterThan(100);
    expect(output.second.length).toBeGreaterThan(output.first.length);
    const recorded = log
      .filter((e) => e.type === 'STEP_COMPLETED' && (e.payload as { kind: string }).kind === 'history')
      .map((e) => (e.payload as { output: unknown }).output);
    expect(recorded).toEqual([output.first, output.second]);
  });
});
