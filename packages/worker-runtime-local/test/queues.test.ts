/**
 * Queues through real supervisors on one SQLite file (docs/queues.md): limits hold across
 * runtimes sharing the file, suspended executions hold no slot, deduplication, priority, delays,
 * and bad input refused before anything is written.
 */
import { Supervisor } from '@skein/worker-runtime-local';
import {
  defineQueue,
  defineWorkflow,
  InvalidInputError,
  type QueueDefinition,
  type Stores,
  UnknownQueueError,
} from '@skein/workflow-runtime';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { harness, until } from './support/sqlite.js';

const h = harness();

/** Bodies in their step right now, and the most seen at once. */
const gauge = { now: 0, max: 0, order: [] as string[] };

const slow = defineWorkflow({
  name: 'slow',
  input: z.object({ tag: z.string(), ms: z.number() }),
  async run(ctx, input) {
    return ctx.step('work', async () => {
      gauge.now += 1;
      gauge.max = Math.max(gauge.max, gauge.now);
      gauge.order.push(input.tag);
      await new Promise((resolve) => setTimeout(resolve, input.ms));
      gauge.now -= 1;
      return input.tag;
    });
  },
});

const napper = defineWorkflow({
  name: 'napper',
  input: z.object({ tag: z.string(), ms: z.number() }),
  async run(ctx, input) {
    await ctx.sleep('nap', input.ms);
    return ctx.step('after', () => input.tag);
  },
});

const workflows = [slow, napper];

function node(stores: Stores, queues: QueueDefinition[], concurrency = 10) {
  const runtime = h.runtime({ stores, workflows, queues, lease: { ttlMs: 2_000 } });
  const supervisor = new Supervisor({
    runtime,
    stores,
    tickIntervalMs: 20,
    concurrency,
    onError: (error) => h.backgroundErrors.push(error),
  });
  return { runtime, supervisor };
}

function resetGauge(): void {
  gauge.now = 0;
  gauge.max = 0;
  gauge.order = [];
}

describe('queues on one SQLite file', () => {
  it('concurrency holds across two runtimes on one file; plain pending claims leave queue work alone', async () => {
    resetGauge();
    const db = h.db();
    const q = defineQueue({ name: 'q', concurrency: 3, workerConcurrency: 2 });
    const a = node(db.stores, [q]);
    const b = node(db.connect(), [q]);
    const handles = [];
    for (let i = 0; i < 12; i++)
      handles.push(await a.runtime.enqueue(slow, { tag: `t${i}`, ms: 60 }, { queue: q }));
    a.supervisor.start();
    b.supervisor.start();
    try {
      expect((await Promise.all(handles.map((handle) => handle.result()))).sort()).toHaveLength(12);
    } finally {
      await Promise.all([a.supervisor.stop(), b.supervisor.stop()]);
    }
    expect(gauge.max).toBeLessThanOrEqual(3);
    expect(gauge.max).toBeGreaterThanOrEqual(2);
    // Each execution left the queue at its end.
    for (const handle of handles) expect(await db.stores.queues?.get(handle.executionId)).toBeNull();
  });

  it("a runtime's in-process maintenance leaves queue work to the queue's claims", async () => {
    const db = h.db();
    const queue = defineQueue({ name: 'maint', concurrency: 1 });
    const runtime = h.runtime({ stores: db.stores, workflows, queues: [queue], lease: { ttlMs: 2_000 } });
    for (const tag of ['m-1', 'm-2', 'm-3'])
      await runtime.enqueue(slow, { tag, ms: 1 }, { executionId: tag, queue: 'maint' });
    const pass = await runtime.maintain();
    expect(pass?.claimed).toEqual([]);
    for (const tag of ['m-1', 'm-2', 'm-3']) expect((await runtime.loadState(tag))?.status).toBe('pending');
  });

  it('a suspended execution holds no slot: the next one runs while it sleeps', async () => {
    resetGauge();
    const db = h.db();
    const q = defineQueue({ name: 'q', concurrency: 1 });
    const { runtime, supervisor } = node(db.stores, [q]);
    const sleeper = await runtime.enqueue(napper, { tag: 'nap', ms: 400 }, { queue: q });
    const quick = await runtime.enqueue(slow, { tag: 'quick', ms: 1 }, { queue: q });
    supervisor.start();
    try {
      expect(await quick.result()).toBe('quick');
      expect((await sleeper.state())?.status).toBe('suspended');
      expect(await db.stores.queues?.get(sleeper.executionId)).toMatchObject({ state: 'suspended' });
      expect(await sleeper.result()).toBe('nap');
    } finally {
      await supervisor.stop();
    }
    expect(await db.stores.queues?.get(sleeper.executionId)).toBeNull();
  });

  it('deduplicationId returns the first handle while the first is not finished, and is free after', async () => {
    const db = h.db();
    const q = defineQueue({ name: 'q' });
    const { runtime, supervisor } = node(db.stores, [q]);
    const first = await runtime.enqueue(slow, { tag: 'a', ms: 1 }, { queue: q, deduplicationId: 'once' });
    const again = await runtime.enqueue(slow, { tag: 'b', ms: 1 }, { queue: 'q', deduplicationId: 'once' });
    expect(again.executionId).toBe(first.executionId);
    expect((await runtime.list()).items).toHaveLength(1);
    supervisor.start();
    try {
      expect(await again.result()).toBe('a');
      const later = await runtime.enqueue(slow, { tag: 'c', ms: 1 }, { queue: q, deduplicationId: 'once' });
      expect(later.executionId).not.toBe(first.executionId);
      expect(await later.result()).toBe('c');
    } finally {
      await supervisor.stop();
    }
  });

  it('priority: lower priority runs first on a queue with priority: true', async () => {
    resetGauge();
    const db = h.db();
    const q = defineQueue({ name: 'q', concurrency: 1, priority: true });
    const { runtime, supervisor } = node(db.stores, [q]);
    const handles = [];
    for (const [tag, priority] of [
      ['p5', 5],
      ['p1', 1],
      ['p3', 3],
      ['p0', 0],
    ] as const)
      handles.push(await runtime.enqueue(slow, { tag, ms: 1 }, { queue: q, priority }));
    supervisor.start();
    try {
      await Promise.all(handles.map((handle) => handle.result()));
    } finally {
      await supervisor.stop();
    }
    expect(gauge.order).toEqual(['p0', 'p1', 'p3', 'p5']);
  });

  it('delayMs: the execution is not started before its delay', async () => {
    resetGauge();
    const db = h.db();
    const q = defineQueue({ name: 'q' });
    const { runtime, supervisor } = node(db.stores, [q]);
    const enqueuedAt = Date.now();
    const handle = await runtime.enqueue(slow, { tag: 'late', ms: 1 }, { queue: q, delayMs: 300 });
    supervisor.start();
    try {
      await until(async () => (await handle.state())?.status === 'completed', 5_000);
    } finally {
      await supervisor.stop();
    }
    const history = await runtime.history(handle.executionId);
    const started = history.find((event) => event.type === 'STEP_STARTED' || event.type === 'STEP_COMPLETED');
    expect(started!.recordedAt.getTime() - enqueuedAt).toBeGreaterThanOrEqual(300);
  });

  it('a slot that lapses while its run goes on is reported to onError', async () => {
    resetGauge();
    const db = h.db();
    const q = defineQueue({ name: 'q', concurrency: 2 });
    // A short TTL: renewals every 100 ms while dozens of short runs end and give their slots back.
    const runtime = h.runtime({ stores: db.stores, workflows, queues: [q], lease: { ttlMs: 300 } });
    const errors: unknown[] = [];
    const supervisor = new Supervisor({
      runtime,
      stores: db.stores,
      tickIntervalMs: 20,
      onError: (error) => errors.push(error),
    });
    const quick = [];
    for (let i = 0; i < 40; i++)
      quick.push(await runtime.enqueue(slow, { tag: `q${i}`, ms: 15 }, { queue: q }));
    supervisor.start();
    try {
      await Promise.all(quick.map((handle) => handle.result()));
      expect(errors.filter((error) => (error as Error).name === 'QueueSlotLapsedError')).toEqual([]);
      // A run that outlives its slot (another owner took the lapsed slot meanwhile) is reported.
      const stalled = await runtime.enqueue(slow, { tag: 'stalled', ms: 600 }, { queue: q });
      await until(async () => (await db.stores.queues?.get(stalled.executionId))?.state === 'running');
      await until(async () => {
        const taken = await db.stores.queues?.claim({
          queue: 'q',
          owner: 'someone-else',
          now: Date.now() + 10_000,
          ttlMs: 60_000,
          max: 1,
          limits: {},
          priority: false,
        });
        return (taken?.length ?? 0) > 0;
      });
      await until(() => errors.some((error) => (error as Error).name === 'QueueSlotLapsedError'));
      await stalled.result();
    } finally {
      await supervisor.stop();
    }
  });

  it('L7: bad queue options or input are refused before anything is written', async () => {
    const db = h.db();
    const q = defineQueue({ name: 'q' });
    const { runtime } = node(db.stores, [q]);
    await expect(runtime.enqueue(slow, { tag: 'x', ms: 1 }, { queue: 'nope' })).rejects.toThrow(
      UnknownQueueError,
    );
    await expect(runtime.enqueue(slow, { tag: 'x', ms: 1 }, { queue: q, priority: 1 })).rejects.toThrow(
      /options\.priority: queue "q" was defined without priority: true/,
    );
    await expect(runtime.enqueue(slow, { tag: 'x', ms: 1 }, { queue: q, delayMs: -1 })).rejects.toThrow(
      /options\.delayMs/,
    );
    await expect(runtime.enqueue(slow, { tag: 'x', ms: 1 }, { partitionKey: 'k' })).rejects.toThrow(
      /options\.queue/,
    );
    await expect(
      runtime.enqueue(slow, { tag: 1, ms: 1 } as never, { queue: q, executionId: 'bad' }),
    ).rejects.toThrow(InvalidInputError);
    expect(await db.stores.queues?.get('bad')).toBeNull();
    expect((await runtime.list()).items).toEqual([]);
    expect(() => defineQueue({ name: 'q', concurrency: 0 })).toThrow(/options\.concurrency/);
    expect(() => defineQueue({ name: 'q', rateLimit: { limit: 1 } } as never)).toThrow(
      /options\.rateLimit\.periodMs/,
    );
  });
});
