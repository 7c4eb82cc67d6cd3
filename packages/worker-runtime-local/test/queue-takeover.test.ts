/**
 * A queue's claim takes the pending executions of the slots it took over together
 * (`EventStore.takeOverPending`, one round trip per claim) and each run goes on from that log
 * under that fence, with no fence and no read of its own (adr/0096). An execution that is not
 * pending when claimed (running after a lapsed slot, suspended) folds its own log as before.
 * Real SQLite files.
 */
import { Supervisor } from '@skein/worker-runtime-local';
import { defineQueue, defineWorkflow, type EventStore, type Stores } from '@skein/workflow-runtime';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { harness, until } from './support/sqlite.js';

const h = harness();

const job = defineWorkflow({
  name: 'job',
  input: z.object({ n: z.number() }),
  async run(ctx, { n }) {
    const a = await ctx.step('a', () => n + 1);
    return ctx.step('b', () => a + 1);
  },
});

/** `events` with a count of each run's own fence acquisitions and log reads, and of takeovers. */
function counting(events: EventStore) {
  const calls = { acquireFence: 0, read: 0, takeOverPending: 0, takenOver: 0 };
  const proxied = new Proxy(events, {
    get(inner, key, receiver) {
      const value = Reflect.get(inner, key, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        if (key === 'acquireFence' || key === 'read' || key === 'takeOverPending') calls[key] += 1;
        const result = await (value as (...a: unknown[]) => Promise<unknown>).apply(inner, args);
        if (key === 'takeOverPending') calls.takenOver += (result as unknown[]).length;
        return result;
      };
    },
  });
  return { events: proxied, calls };
}

describe("a queue's claim takes its pending executions over together", () => {
  it('runs every claimed pending execution from the takeover: no fence or read per run, fewer takeovers than runs', async () => {
    const db = h.db();
    const { events, calls } = counting(db.stores.events);
    const stores: Stores = { ...db.stores, events };
    const queue = defineQueue({ name: 'work', concurrency: 4 });
    const runtime = h.runtime({
      stores,
      workflows: [job],
      queues: [queue],
      maintenance: false,
      lease: { ttlMs: 2_000 },
    });
    const ids = Array.from({ length: 12 }, (_, i) => `q-${i}`);
    const handles = [];
    for (const [i, id] of ids.entries())
      handles.push(await runtime.enqueue(job, { n: i }, { executionId: id, queue }));
    const before = { ...calls };
    const supervisor = new Supervisor({
      runtime,
      stores,
      tickIntervalMs: 20,
      onError: (error) => h.backgroundErrors.push(error),
    });
    supervisor.start();
    try {
      expect(await Promise.all(handles.map((handle) => handle.result()))).toEqual(ids.map((_, i) => i + 2));
    } finally {
      await supervisor.stop();
    }
    expect(calls.takenOver - before.takenOver).toBe(ids.length);
    expect(calls.acquireFence - before.acquireFence).toBe(0);
    expect(calls.takeOverPending - before.takeOverPending).toBeLessThan(ids.length);
    for (const id of ids) {
      const log = await db.stores.events.read(id);
      expect(log.map((event) => event.type)).toEqual([
        'EXECUTION_STARTED',
        'EXECUTION_RECOVERED',
        'STEP_STARTED',
        'STEP_COMPLETED',
        'STEP_STARTED',
        'STEP_COMPLETED',
        'EXECUTION_COMPLETED',
      ]);
      // Every event of the run under the takeover's fence, newer than seq 0's.
      expect(new Set(log.slice(1).map((event) => event.fence)).size).toBe(1);
      expect(log[1]!.fence).toBeGreaterThan(log[0]!.fence);
      expect(await db.stores.queues?.get(id)).toBeNull();
    }
    expect(h.backgroundErrors).toEqual([]);
  });

  it('an execution that is running when claimed (its slot lapsed) is not taken over: its run folds its own log', async () => {
    const db = h.db();
    const { events, calls } = counting(db.stores.events);
    const stores: Stores = { ...db.stores, events };
    const queue = defineQueue({ name: 'work', concurrency: 1 });
    const runtime = h.runtime({
      stores,
      workflows: [job],
      queues: [queue],
      maintenance: false,
      lease: { ttlMs: 200 },
    });
    await runtime.enqueue(job, { n: 1 }, { executionId: 'lapsed', queue });
    // Another node claimed the slot and moved it to running, then died: its slot lapses.
    const [item] = await db.stores.queues!.claim({
      queue: 'work',
      owner: 'dead-node',
      now: Date.now(),
      ttlMs: 100,
      max: 1,
      limits: queue.limits,
      priority: queue.priority,
    });
    expect(item?.executionId).toBe('lapsed');
    const fence = await db.stores.events.acquireFence('lapsed');
    await db.stores.events.append({
      executionId: 'lapsed',
      workflow: 'job',
      expectedSeq: 1,
      fence,
      events: [
        {
          type: 'EXECUTION_RECOVERED',
          payload: runtime.codec.encode({ reason: 'taken over from status pending', fence }),
          envelopeId: 'dead-node-recovered',
          recordedAt: Date.now(),
        },
      ],
    });
    expect((await db.stores.events.getExecution('lapsed'))?.status).toBe('running');
    const before = { ...calls };
    const supervisor = new Supervisor({
      runtime,
      stores,
      tickIntervalMs: 20,
      leaseTtlMs: 200,
      onError: (error) => h.backgroundErrors.push(error),
    });
    supervisor.start();
    try {
      await until(
        async () => (await db.stores.events.getExecution('lapsed'))?.status === 'completed',
        10_000,
      );
    } finally {
      await supervisor.stop();
    }
    expect(calls.takenOver - before.takenOver).toBe(0);
    expect(calls.acquireFence - before.acquireFence).toBeGreaterThan(0);
    expect(await runtime.result('lapsed')).toBe(3);
  });
});
