/**
 * Fairness through real supervisors on a SQLite file (docs/queues.md#fairness): 100 partition
 * keys under a combined limit each make progress within a bound while one key holds a large
 * backlog, and one queue's backlog does not delay another queue's work.
 */
import { Supervisor } from '@skein/worker-runtime-local';
import { defineQueue, defineWorkflow, type QueueDefinition, type Stores } from '@skein/workflow-runtime';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { harness } from './support/sqlite.js';

const h = harness();
const started: { key: string; queue: string }[] = [];

const task = defineWorkflow({
  name: 'task',
  input: z.object({ key: z.string(), queue: z.string(), ms: z.number() }),
  async run(ctx, input) {
    return ctx.step('work', async () => {
      started.push({ key: input.key, queue: input.queue });
      await new Promise((resolve) => setTimeout(resolve, input.ms));
      return input.key;
    });
  },
});

function node(stores: Stores, queues: QueueDefinition[]) {
  const runtime = h.runtime({ stores, workflows: [task], queues, lease: { ttlMs: 5_000 } });
  const supervisor = new Supervisor({ runtime, stores, tickIntervalMs: 10, concurrency: 20 });
  return { runtime, supervisor };
}

describe('queue fairness on one SQLite file', () => {
  it('fairness: 100 keys under a combined limit each progress within a bound beside one busy key', async () => {
    started.length = 0;
    const db = h.db();
    const q = defineQueue({ name: 'shared', concurrency: 5, partition: { concurrency: 1 } });
    const { runtime, supervisor } = node(db.stores, [q]);
    const handles = [];
    // The busy key is enqueued first, all of it: a queue served in enqueue order would run it all first.
    for (let i = 0; i < 200; i++)
      handles.push(
        await runtime.enqueue(
          task,
          { key: 'busy', queue: 'shared', ms: 1 },
          { queue: q, partitionKey: 'busy' },
        ),
      );
    const keys = Array.from({ length: 100 }, (_, i) => `k${String(i).padStart(3, '0')}`);
    for (const round of [0, 1])
      for (const key of keys)
        handles.push(
          await runtime.enqueue(
            task,
            { key, queue: 'shared', ms: 1 },
            { queue: q, partitionKey: key, executionId: `${key}-${round}` },
          ),
        );
    supervisor.start();
    try {
      await Promise.all(handles.map((handle) => handle.result()));
    } finally {
      await supervisor.stop();
    }
    expect(started).toHaveLength(400);
    // Round-robin over 101 partitions: a key's n-th item starts within the first n × 101 starts
    // (plus the slots of one claim, which may be handed out in one go).
    for (const key of keys) {
      const positions = started.flatMap((entry, at) => (entry.key === key ? [at] : []));
      expect(positions).toHaveLength(2);
      expect(positions[0]).toBeLessThan(101 + 5);
      expect(positions[1]).toBeLessThan(2 * 101 + 5);
    }
    // The busy key got its share too, never all of it first.
    const busyEarly = started.slice(0, 101).filter((entry) => entry.key === 'busy').length;
    expect(busyEarly).toBeGreaterThanOrEqual(1);
    expect(busyEarly).toBeLessThanOrEqual(5);
  }, 120_000);

  it("one queue's backlog does not delay another queue's work", async () => {
    started.length = 0;
    const db = h.db();
    const bulk = defineQueue({ name: 'bulk', concurrency: 2 });
    const urgent = defineQueue({ name: 'urgent', concurrency: 2 });
    const { runtime, supervisor } = node(db.stores, [bulk, urgent]);
    for (let i = 0; i < 2_000; i++)
      await runtime.enqueue(
        task,
        { key: `b${i}`, queue: 'bulk', ms: 20 },
        { queue: bulk, executionId: `bulk-${i}` },
      );
    supervisor.start();
    try {
      const handles = [];
      for (let i = 0; i < 6; i++)
        handles.push(
          await runtime.enqueue(task, { key: `u${i}`, queue: 'urgent', ms: 20 }, { queue: urgent }),
        );
      await Promise.all(handles.map((handle) => handle.result()));
      // Within the time the urgent work took, the bulk queue (same limit, 20 ms steps) only
      // moved a little: the urgent queue never waited for its backlog.
      const bulkDone = started.filter((entry) => entry.queue === 'bulk').length;
      expect(bulkDone).toBeLessThan(200);
    } finally {
      await supervisor.stop();
    }
  }, 120_000);
});
