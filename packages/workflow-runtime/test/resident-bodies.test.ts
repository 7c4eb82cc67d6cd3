/**
 * Issue #25 item 10, resident bodies (adr/0068): a body that suspended here is kept in memory
 * and a resume here goes on from where it waits, with no replay, as long as the log is the one
 * it suspended on. Evicted, or the log moved (another runtime wrote, a fence was taken, a
 * cancellation), it is replayed from the log with the same result.
 */
import { createRuntime, defineWorkflow, type Runtime, type Stores } from '@skein/workflow-runtime';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { backings, harness, types, until } from './support/stores.js';

const T0 = Date.UTC(2026, 11, 1);

/** A workflow counting how often its body starts (each start is a replay from seq 0, but the first). */
function counted() {
  const counts = { bodies: 0, steps: 0 };
  const ticker = defineWorkflow({
    name: 'ticker',
    input: z.number().int().positive(),
    signals: { tick: z.number() },
    async run(ctx, n) {
      counts.bodies += 1;
      let sum = 0;
      for (let i = 0; i < n; i++) {
        sum += await ctx.waitForSignal('tick');
        sum += await ctx.step(`add-${i}`, () => {
          counts.steps += 1;
          return 1;
        });
      }
      return sum;
    },
  });
  const leaf = defineWorkflow({
    name: 'leaf',
    input: z.number(),
    async run(ctx, i) {
      return ctx.step('double', () => i * 2);
    },
  });
  const parent = defineWorkflow({
    name: 'parent',
    input: z.number().int().positive(),
    async run(ctx, n) {
      counts.bodies += 1;
      let sum = 0;
      for (let i = 0; i < n; i++) sum += await ctx.child(leaf, i);
      await ctx.sleep('nap', 1_000);
      return sum;
    },
  });
  return { counts, ticker, leaf, parent };
}

/** Suspended, having consumed `count` signals. */
async function suspendedAfter(runtime: Runtime, id: string, count: number): Promise<void> {
  await until(async () => {
    const state = await runtime.loadState(id);
    return state?.status === 'suspended' && (state.consumedSignals?.length ?? 0) === count;
  });
}

/** Send ticks `from`…`n - 1` one at a time, each once the previous resume suspended again. */
async function tick(runtime: Runtime, id: string, n: number, from = 0): Promise<void> {
  for (let i = from; i < n; i++) {
    await suspendedAfter(runtime, id, i);
    await runtime.signal(id, 'tick', 10);
  }
}

describe.each(backings)('resident bodies (%s store)', (_, open) => {
  const h = harness(open);

  test('signals consumed in a loop: every resume goes on in memory, the body starts once', async () => {
    const { stores } = h.open();
    const { counts, ticker } = counted();
    const runtime = h.runtime({ stores, workflows: [ticker], maintenance: false });
    const handle = await runtime.start(ticker, 20, { executionId: 't-1' });
    await tick(runtime, 't-1', 20);
    expect(await handle.result()).toBe(220);
    expect(counts).toEqual({ bodies: 1, steps: 20 });
    const log = types(await runtime.history('t-1'));
    expect(log.filter((type) => type === 'EXECUTION_RESUMED')).toHaveLength(20);
    expect(h.backgroundErrors).toEqual([]);
  });

  test('with the cache off (maxResident 0) every resume replays: the same log and result', async () => {
    const { stores } = h.open();
    const { counts, ticker } = counted();
    const runtime = h.runtime({ stores, workflows: [ticker], maintenance: false, cache: { maxResident: 0 } });
    const handle = await runtime.start(ticker, 5, { executionId: 't-1' });
    await tick(runtime, 't-1', 5);
    expect(await handle.result()).toBe(55);
    expect(counts).toEqual({ bodies: 6, steps: 5 });
  });

  test('children awaited one after another, then a timer: resumes by a settled child and a due timer go on in memory', async () => {
    const { stores } = h.open();
    let now = T0;
    const { counts, leaf, parent } = counted();
    const runtime = h.runtime({ stores, workflows: [parent, leaf], maintenance: false, clock: () => now });
    const handle = await runtime.start(parent, 10, { executionId: 'p-1' });
    await until(async () => {
      const state = await runtime.loadState('p-1');
      return state?.status === 'suspended' && state.timers.some((timer) => timer.dueAt === T0 + 1_000);
    });
    now += 1_000;
    await runtime.wake('p-1');
    expect(await handle.result()).toBe(90);
    expect(counts.bodies).toBe(1);
    expect(h.backgroundErrors).toEqual([]);
  });

  test('evicted (maxResident 1, two executions taking turns): each resume replays, with the same results', async () => {
    const { stores } = h.open();
    const { counts, ticker } = counted();
    const runtime = h.runtime({ stores, workflows: [ticker], maintenance: false, cache: { maxResident: 1 } });
    const a = await runtime.start(ticker, 4, { executionId: 'a' });
    const b = await runtime.start(ticker, 4, { executionId: 'b' });
    await suspendedAfter(runtime, 'a', 0);
    await suspendedAfter(runtime, 'b', 0);
    for (let i = 0; i < 4; i++) {
      await tick(runtime, 'a', i + 1, i);
      if (i < 3) await suspendedAfter(runtime, 'a', i + 1);
      await tick(runtime, 'b', i + 1, i);
      if (i < 3) await suspendedAfter(runtime, 'b', i + 1);
    }
    expect([await a.result(), await b.result()]).toEqual([44, 44]);
    // Each resume of one finds the other resident in the one place: it replays. Only the last
    // resume of b goes on in memory (a completed, keeping nothing): 2 starts + 7 replays.
    expect(counts.bodies).toBe(9);
    expect(counts.steps).toBe(8);
  });

  test('another runtime on the same stores resumes it: the first runtime drops its body and replays', async () => {
    const backing = h.open();
    const { counts, ticker } = counted();
    const first = h.runtime({ stores: backing.stores, workflows: [ticker], maintenance: false });
    const second = h.runtime({ stores: backing.reopen(), workflows: [ticker], maintenance: false });
    const handle = await first.start(ticker, 3, { executionId: 't-1' });
    await tick(first, 't-1', 1);
    await suspendedAfter(first, 't-1', 1);
    expect(counts.bodies).toBe(1);
    // The second runtime takes the next resume: it replays (it has no body), and writes the log.
    await tick(second, 't-1', 2, 1);
    await suspendedAfter(first, 't-1', 2);
    expect(counts.bodies).toBe(2);
    // Back on the first: its body saw seq n, the log is longer now, so it replays too.
    await tick(first, 't-1', 3, 2);
    expect(await handle.result()).toBe(33);
    expect(counts.bodies).toBe(3);
    expect(counts.steps).toBe(3);
  });

  test('a timer fired by another runtime: the body resident where it slept is dropped, and its next resume there replays', async () => {
    const backing = h.open();
    let now = T0;
    let bodies = 0;
    const napper = defineWorkflow({
      name: 'napper',
      input: z.object({}),
      signals: { tick: z.number() },
      async run(ctx) {
        bodies += 1;
        await ctx.sleep('nap', 1_000);
        return ctx.waitForSignal('tick');
      },
    });
    const options = { workflows: [napper], maintenance: false as const, clock: () => now };
    const first = h.runtime({ stores: backing.stores, ...options });
    const second = h.runtime({ stores: backing.reopen(), ...options });
    const handle = await first.start(napper, {}, { executionId: 'n-1' });
    await until(async () => (await first.loadState('n-1'))?.status === 'suspended');
    now += 1_000;
    // The other runtime fires the timer: it has no body, so it replays, and waits for the signal.
    await second.wake('n-1');
    await until(async () => (await first.loadState('n-1'))?.awaiting?.signals.includes('tick') === true);
    expect(bodies).toBe(2);
    // The first runtime's body last saw the sleep: the log moved, so this resume replays.
    await first.signal('n-1', 'tick', 7);
    expect(await handle.result()).toBe(7);
    expect(bodies).toBe(3);
  });

  test('a fence taken without writing (a takeover that never wrote) makes the resident body replay', async () => {
    const { stores } = h.open();
    const { counts, ticker } = counted();
    const runtime = h.runtime({ stores, workflows: [ticker], maintenance: false });
    const handle = await runtime.start(ticker, 2, { executionId: 't-1' });
    await tick(runtime, 't-1', 1);
    await suspendedAfter(runtime, 't-1', 1);
    expect(counts.bodies).toBe(1);
    await stores.events.acquireFence('t-1');
    await tick(runtime, 't-1', 2, 1);
    expect(await handle.result()).toBe(22);
    expect(counts.bodies).toBe(2);
  });

  test('a cancellation while resident replays the body, which sees CancelledError and ends cancelled', async () => {
    const { stores } = h.open();
    const { counts, ticker } = counted();
    const runtime = h.runtime({ stores, workflows: [ticker], maintenance: false });
    await runtime.start(ticker, 3, { executionId: 't-1' });
    await tick(runtime, 't-1', 1);
    await suspendedAfter(runtime, 't-1', 1);
    await runtime.cancel('t-1', 'no more');
    await until(async () => (await runtime.loadState('t-1'))?.status === 'cancelled');
    expect(counts.bodies).toBe(2);
  });

  test('updates applied at quiet points of a resident body, between signals', async () => {
    const { stores } = h.open();
    let bodies = 0;
    const cart = defineWorkflow({
      name: 'cart',
      input: z.object({}),
      signals: { done: z.boolean() },
      updates: { add: z.string() },
      async run(ctx) {
        bodies += 1;
        const items: string[] = [];
        ctx.onUpdate('add', (item) => {
          items.push(item);
          return items.length;
        });
        await ctx.waitForSignal('done');
        await ctx.waitForSignal('done');
        return items;
      },
    });
    const runtime = h.runtime({ stores, workflows: [cart], maintenance: false });
    const handle = await runtime.start(cart, {}, { executionId: 'c-1' });
    expect(await runtime.update('c-1', 'add', 'apple')).toBe(1);
    expect(await runtime.update('c-1', 'add', 'pear')).toBe(2);
    await runtime.signal('c-1', 'done', true);
    await until(async () => (await runtime.loadState('c-1'))?.status === 'suspended');
    expect(await runtime.update('c-1', 'add', 'fig')).toBe(3);
    await runtime.signal('c-1', 'done', true);
    expect(await handle.result()).toEqual(['apple', 'pear', 'fig']);
    expect(bodies).toBe(1);
    // A fresh runtime replays the whole log to the same end (the log alone decides).
    const replayed = createRuntime({
      stores,
      workflows: [cart],
      maintenance: false,
      cache: { maxResident: 0 },
    });
    expect((await replayed.loadState('c-1'))?.output).toEqual(['apple', 'pear', 'fig']);
    await replayed.close();
  });

  test('L7: a bad cache option is refused at createRuntime, naming the field', () => {
    const { stores } = h.open();
    const { ticker } = counted();
    for (const cache of [{ maxResident: -1 }, { maxResident: 1.5 }, { max: 3 }, 'big'])
      expect(() =>
        createRuntime({ stores: stores as Stores, workflows: [ticker], cache: cache as never }),
      ).toThrow(/cache/);
  });
});
