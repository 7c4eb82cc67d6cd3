/**
 * Resumptions retake a slot (docs/queues.md): two runtimes on one SQLite file, each with its
 * own Supervisor, share a queue with one slot. A suspended execution holds none; when its sleep
 * ends or its signal arrives, it waits in the queue until the slot is free, whichever runtime
 * resumes it, and the steps of the queue never run two at once.
 */
import { Supervisor } from '@skein/worker-runtime-local';
import { defineQueue, defineWorkflow, type QueueDefinition, type Stores } from '@skein/workflow-runtime';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { slotGauge, suspendingWorkflows } from './support/slot-gauge.js';
import { harness, until } from './support/sqlite.js';

const h = harness();

/** Steps of the queue's executions running right now, and the most seen at once. */
const gauge = slotGauge();
const { measured } = gauge;

/** Holds the slot for `ms` in one step. */
const hog = defineWorkflow({
  name: 'hog',
  input: z.object({ ms: z.number() }),
  async run(ctx, input) {
    await ctx.step('work', () => measured(input.ms));
    return 'hog';
  },
});

const { napper, waiter } = suspendingWorkflows(measured, 5);

const workflows = [hog, napper, waiter];

function node(stores: Stores, queues: QueueDefinition[]) {
  const runtime = h.runtime({ stores, workflows, queues, lease: { ttlMs: 2_000 } });
  const supervisor = new Supervisor({
    runtime,
    stores,
    tickIntervalMs: 20,
    onError: (error) => h.backgroundErrors.push(error),
  });
  return { runtime, supervisor };
}

/** When the log of `executionId` recorded its first event of `type` (for step `name`, if given). */
async function recordedAt(stores: Stores, executionId: string, type: string, name?: string) {
  const log = await stores.events.read(executionId, 0, 1_000);
  const event = log.find(
    (envelope) => envelope.type === type && (name === undefined || envelope.payload.includes(`"${name}"`)),
  );
  if (event === undefined) throw new Error(`${executionId} has no ${type} ${name ?? ''}`);
  return event.recordedAt;
}

describe('resumed executions of a queue retake a slot', () => {
  it('after its sleep, an execution waits while another holds the only slot (two runtimes)', async () => {
    gauge.reset();
    const db = h.db();
    const q = defineQueue({ name: 'one', concurrency: 1 });
    const a = node(db.stores, [q]);
    const b = node(db.connect(), [q]);
    const sleeper = await a.runtime.enqueue(napper, { ms: 150 }, { executionId: 'nap', queue: q });
    const holder = await a.runtime.enqueue(hog, { ms: 700 }, { executionId: 'hog', queue: q });
    a.supervisor.start();
    b.supervisor.start();
    try {
      // The sleep ends while the hog holds the slot: the sleeper is queued, not running.
      await until(async () => (await db.stores.queues?.get('hog'))?.state === 'running', 5_000);
      await until(async () => (await db.stores.queues?.get('nap'))?.state === 'queued', 5_000);
      expect((await db.stores.queues?.get('hog'))?.state).toBe('running');
      expect(await Promise.all([sleeper.result(), holder.result()])).toEqual(['napper', 'hog']);
    } finally {
      await Promise.all([a.supervisor.stop(), b.supervisor.stop()]);
    }
    expect(gauge.max).toBe(1);
    // The log agrees: the sleeper's second step started after the hog's step completed.
    const hogDone = await recordedAt(db.stores, 'hog', 'STEP_COMPLETED');
    expect(await recordedAt(db.stores, 'nap', 'STEP_STARTED', 'after')).toBeGreaterThanOrEqual(hogDone);
    expect(await db.stores.queues?.get('nap')).toBeNull();
  });

  it('a signal sent from the other runtime queues the waiter; it resumes once the slot is free', async () => {
    gauge.reset();
    const db = h.db();
    const q = defineQueue({ name: 'one', concurrency: 1 });
    const a = node(db.stores, [q]);
    const b = node(db.connect(), [q]);
    const waiting = await a.runtime.enqueue(waiter, {}, { executionId: 'wait', queue: q });
    a.supervisor.start();
    b.supervisor.start();
    try {
      await until(async () => (await db.stores.queues?.get('wait'))?.state === 'suspended', 5_000);
      const holder = await a.runtime.enqueue(hog, { ms: 600 }, { executionId: 'hog', queue: q });
      await until(async () => (await db.stores.queues?.get('hog'))?.state === 'running', 5_000);
      // Runtime b takes the signal; the waiter waits in the queue instead of resuming there.
      await b.runtime.signal('wait', 'go', true);
      expect((await db.stores.queues?.get('wait'))?.state).toBe('queued');
      expect((await waiting.state())?.status).toBe('suspended');
      expect(await Promise.all([waiting.result(), holder.result()])).toEqual(['waiter', 'hog']);
    } finally {
      await Promise.all([a.supervisor.stop(), b.supervisor.stop()]);
    }
    expect(gauge.max).toBe(1);
    const hogDone = await recordedAt(db.stores, 'hog', 'STEP_COMPLETED');
    expect(await recordedAt(db.stores, 'wait', 'STEP_STARTED', 'after')).toBeGreaterThanOrEqual(hogDone);
    expect(h.backgroundErrors).toEqual([]);
  });
});
