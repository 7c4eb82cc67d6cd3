/**
 * Issue #23, updates (adr/0049): declared on the definition like signals, handled in the body
 * with `ctx.onUpdate`, sent with `runtime.update`. A rejected update writes nothing; an
 * accepted one is recorded as `UPDATE_APPLIED` at a position, replays there, and its handler's
 * result is returned; a repeated `updateId` returns the first result. On every real store.
 */
import {
  createRuntime,
  defineWorkflow,
  ExecutionFinishedError,
  ExecutionNotFoundError,
  InvalidInputError,
  type Runtime,
  type Stores,
  UnknownUpdateError,
  UpdateFailedError,
  UpdateTimeoutError,
} from '@skein/workflow-runtime';
import { afterEach, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { realStores } from './support/real-stores.js';
import { deferred, types, until } from './support/stores.js';

describe.each(realStores)('updates (%s store)', (_, openStores) => {
  const opened: Stores[] = [];
  const runtimes: Runtime[] = [];
  afterEach(async () => {
    await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
    await Promise.all(opened.splice(0).map((stores) => stores.close()));
  });

  async function open(): Promise<Stores> {
    const stores = await openStores();
    opened.push(stores);
    return stores;
  }

  function runtimeOver(stores: Stores, workflows: Parameters<typeof createRuntime>[0]['workflows']): Runtime {
    const runtime = createRuntime({ stores, workflows, maintenance: false });
    runtimes.push(runtime);
    return runtime;
  }

  /** A cart: `add` pushes an item and answers the count; `checkout` (a signal) ends it. */
  function cart(gate?: Promise<void>) {
    const applied: string[] = [];
    const workflow = defineWorkflow({
      name: 'cart',
      input: z.object({ owner: z.string() }),
      signals: { checkout: z.literal(true) },
      updates: { add: z.string().min(1), remove: z.string() },
      async run(ctx, { owner }) {
        const items: string[] = [];
        ctx.onUpdate('add', (item: string) => {
          applied.push(item);
          if (item === 'poison') throw new Error(`no ${item} in a cart`);
          items.push(item);
          return items.length;
        });
        await ctx.step('open', async () => {
          if (gate !== undefined) await gate;
          return owner;
        });
        await ctx.waitForSignal('checkout');
        return ctx.step('bill', () => `${owner}: ${items.join(',')}`);
      },
    });
    return { workflow, applied };
  }

  test('an accepted update is applied at the body’s wait, recorded with its payload and result, and its result returned', async () => {
    const stores = await open();
    const { workflow, applied } = cart();
    const runtime = runtimeOver(stores, [workflow]);
    const handle = await runtime.start(workflow, { owner: 'ada' }, { executionId: 'cart-1' });
    await until(async () => (await handle.state())?.status === 'suspended');

    expect(await runtime.update('cart-1', 'add', 'apple', { updateId: 'u-1' })).toBe(1);
    expect(await runtime.update('cart-1', 'add', 'pear')).toBe(2);
    const log = await runtime.history('cart-1');
    const updates = log.filter((event) => event.type === 'UPDATE_APPLIED');
    expect(updates.map((event) => event.payload)).toEqual([
      { position: 2, name: 'add', updateId: 'u-1', payload: 'apple', result: 1 },
      expect.objectContaining({ position: 3, name: 'add', payload: 'pear', result: 2 }),
    ]);
    // The second update resumed the execution's resident body (adr/0068): each handler ran once.
    // (Without the cache its replay applies the first again, from the log: see the replay test.)
    expect(applied).toEqual(['apple', 'pear']);
    // Applied updates leave the inbox once the run is durable.
    await until(async () => (await stores.signals.pending('cart-1')).length === 0);

    await runtime.signal('cart-1', 'checkout', true);
    expect(await handle.result()).toBe('ada: apple,pear');
  });

  test('an applied update whose inbox row was never completed (a crash after the record) is not applied again', async () => {
    const stores = await open();
    const inbox = stores.signals;
    // The row of every consumed signal stays waiting, as after a crash right after the record.
    const crashing: Stores = {
      ...stores,
      signals: {
        send: (signal, options) => inbox.send(signal, options),
        pending: (executionId, query) => inbox.pending(executionId, query),
        complete: async () => undefined,
        clear: (executionId) => inbox.clear(executionId),
      },
    };
    const { workflow } = cart();
    const runtime = runtimeOver(crashing, [workflow]);
    const handle = await runtime.start(workflow, { owner: 'ada' }, { executionId: 'cart-9' });
    await until(async () => (await handle.state())?.status === 'suspended');
    expect(await runtime.update('cart-9', 'add', 'apple')).toBe(1);
    expect(await inbox.pending('cart-9')).toHaveLength(1);
    // The resumed run finds apple's row still waiting: the log says it was applied.
    expect(await runtime.update('cart-9', 'add', 'pear')).toBe(2);
    await runtime.signal('cart-9', 'checkout', true);
    expect(await handle.result()).toBe('ada: apple,pear');
  });

  test('a rejected update writes nothing: unknown execution, undeclared name, bad payload, ended execution', async () => {
    const stores = await open();
    const { workflow, applied } = cart();
    const runtime = runtimeOver(stores, [workflow]);
    const handle = await runtime.start(workflow, { owner: 'ada' }, { executionId: 'cart-2' });
    await until(async () => (await handle.state())?.status === 'suspended');
    const before = await runtime.history('cart-2');

    await expect(runtime.update('nobody', 'add', 'x')).rejects.toBeInstanceOf(ExecutionNotFoundError);
    const unknown = await runtime.update('cart-2', 'empty', null).catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(UnknownUpdateError);
    expect((unknown as Error).message).toContain('declares no update "empty" (declared: add, remove)');
    const invalid = await runtime.update('cart-2', 'add', '').catch((error: unknown) => error);
    expect(invalid).toBeInstanceOf(InvalidInputError);
    expect((invalid as InvalidInputError).issues[0]?.path).toBe('payload');
    await expect(runtime.update('cart-2', 'add', 'x', { updateId: '' })).rejects.toBeInstanceOf(
      InvalidInputError,
    );
    await expect(runtime.update('cart-2', 'add', 'x', { timeoutMs: -1 })).rejects.toBeInstanceOf(
      InvalidInputError,
    );
    expect(await runtime.history('cart-2')).toEqual(before);
    expect(await stores.signals.pending('cart-2')).toEqual([]);
    expect(applied).toEqual([]);

    await runtime.signal('cart-2', 'checkout', true);
    await handle.result();
    await expect(runtime.update('cart-2', 'add', 'late')).rejects.toBeInstanceOf(ExecutionFinishedError);
    expect(await stores.signals.pending('cart-2')).toEqual([]);
  });

  test('a repeated updateId returns the first result and applies nothing again, also after the execution ended', async () => {
    const stores = await open();
    const { workflow, applied } = cart();
    const runtime = runtimeOver(stores, [workflow]);
    const handle = await runtime.start(workflow, { owner: 'ada' }, { executionId: 'cart-3' });
    await until(async () => (await handle.state())?.status === 'suspended');

    expect(await runtime.update('cart-3', 'add', 'apple', { updateId: 'same' })).toBe(1);
    expect(await runtime.update('cart-3', 'add', 'plum', { updateId: 'same' })).toBe(1);
    expect(applied).toEqual(['apple']);
    await runtime.signal('cart-3', 'checkout', true);
    expect(await handle.result()).toBe('ada: apple');
    expect(await runtime.update('cart-3', 'add', 'apple', { updateId: 'same' })).toBe(1);
    const log = await runtime.history('cart-3');
    expect(types(log).filter((type) => type === 'UPDATE_APPLIED')).toHaveLength(1);
  });

  test('a handler that throws fails that update only: UpdateFailedError with its error, recorded, and the same on a repeat', async () => {
    const stores = await open();
    const { workflow } = cart();
    const runtime = runtimeOver(stores, [workflow]);
    const handle = await runtime.start(workflow, { owner: 'ada' }, { executionId: 'cart-4' });
    await until(async () => (await handle.state())?.status === 'suspended');

    const failed = await runtime
      .update('cart-4', 'add', 'poison', { updateId: 'p' })
      .catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(UpdateFailedError);
    expect((failed as UpdateFailedError).message).toContain('no poison in a cart');
    const again = await runtime.update('cart-4', 'add', 'poison', { updateId: 'p' }).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(UpdateFailedError);
    expect(await runtime.update('cart-4', 'add', 'fig')).toBe(1);
    await runtime.signal('cart-4', 'checkout', true);
    expect(await handle.result()).toBe('ada: fig');
  });

  test('an update sent while a step runs waits for the body’s next wait, then is applied', async () => {
    const stores = await open();
    const gate = deferred();
    const { workflow, applied } = cart(gate.promise);
    const runtime = runtimeOver(stores, [workflow]);
    const handle = await runtime.start(workflow, { owner: 'ada' }, { executionId: 'cart-5' });
    const answer = runtime.update('cart-5', 'add', 'kiwi');
    await until(async () => (await stores.signals.pending('cart-5')).length === 1);
    expect(applied).toEqual([]);
    gate.resolve();
    expect(await answer).toBe(1);
    await runtime.signal('cart-5', 'checkout', true);
    expect(await handle.result()).toBe('ada: kiwi');
  });

  test('a caller that times out gets UpdateTimeoutError; the update is applied later and its id returns the result', async () => {
    const stores = await open();
    const gate = deferred();
    const { workflow } = cart(gate.promise);
    const runtime = runtimeOver(stores, [workflow]);
    const handle = await runtime.start(workflow, { owner: 'ada' }, { executionId: 'cart-6' });
    const late = await runtime
      .update('cart-6', 'add', 'lime', { updateId: 'late', timeoutMs: 30 })
      .catch((error: unknown) => error);
    expect(late).toBeInstanceOf(UpdateTimeoutError);
    gate.resolve();
    await until(async () => (await handle.state())?.status === 'suspended');
    expect(await runtime.update('cart-6', 'add', 'lime', { updateId: 'late' })).toBe(1);
  });

  test('replay: a restarted runtime replays the update at its position, the handler rebuilds the body’s state, nothing is written again', async () => {
    const stores = await open();
    const first = cart();
    const runtime = runtimeOver(stores, [first.workflow]);
    const handle = await runtime.start(first.workflow, { owner: 'ada' }, { executionId: 'cart-7' });
    await until(async () => (await handle.state())?.status === 'suspended');
    expect(await runtime.update('cart-7', 'add', 'date')).toBe(1);
    expect(await runtime.update('cart-7', 'add', 'elderberry')).toBe(2);
    await runtime.close();
    const before = await runtime.history('cart-7');

    const second = cart();
    const restarted = runtimeOver(stores, [second.workflow]);
    await restarted.signal('cart-7', 'checkout', true);
    expect(await restarted.handle('cart-7').result()).toBe('ada: date,elderberry');
    // The handler ran again on replay, with the recorded payloads, in the recorded order.
    expect(second.applied).toEqual(['date', 'elderberry']);
    const after = await restarted.history('cart-7');
    expect(after.slice(0, before.length)).toEqual(before);
    expect(types(after).filter((type) => type === 'UPDATE_APPLIED')).toHaveLength(2);
  });

  test('replay without the handler the log needs is a NonDeterminismError, and nothing is written', async () => {
    const stores = await open();
    const { workflow } = cart();
    const runtime = runtimeOver(stores, [workflow]);
    const handle = await runtime.start(workflow, { owner: 'ada' }, { executionId: 'cart-8' });
    await until(async () => (await handle.state())?.status === 'suspended');
    expect(await runtime.update('cart-8', 'add', 'fig')).toBe(1);
    await runtime.close();
    const before = await runtime.history('cart-8');

    const changed = defineWorkflow({
      name: 'cart',
      input: z.object({ owner: z.string() }),
      signals: { checkout: z.literal(true) },
      updates: { add: z.string().min(1), remove: z.string() },
      async run(ctx, { owner }) {
        await ctx.step('open', () => owner);
        await ctx.waitForSignal('checkout');
        return ctx.step('bill', () => owner);
      },
    });
    const errors: unknown[] = [];
    const restarted = createRuntime({
      stores,
      workflows: [changed],
      maintenance: false,
      onError: (error) => errors.push(error),
    });
    runtimes.push(restarted);
    await restarted.signal('cart-8', 'checkout', true);
    await until(() => errors.length > 0);
    expect(String(errors[0])).toContain('NonDeterminism');
    const after = await restarted.history('cart-8');
    // The wake-up (EXECUTION_RESUMED) is the only event after the update; nothing of the replay.
    expect(types(after.slice(before.length))).toEqual(['EXECUTION_RESUMED']);
  });
});

describe('updates: definitions and handlers are checked', () => {
  test('defineWorkflow refuses an update without a schema, and a signal or update name with the reserved prefix', () => {
    const base = { name: 'w', input: z.object({}), run: async () => 1 };
    expect(() => defineWorkflow({ ...base, updates: { add: 'nope' as never } })).toThrow(
      'updates.add: must be a zod schema',
    );
    expect(() => defineWorkflow({ ...base, signals: { '$update:add': z.string() } })).toThrow(
      'must not start with "$update:"',
    );
    expect(() => defineWorkflow({ ...base, updates: { '$update:add': z.string() } })).toThrow(
      'must not start with "$update:"',
    );
  });
});
