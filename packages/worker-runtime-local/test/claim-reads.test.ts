/**
 * What a claim reads (docs/queues.md#cost): a supervisor's claim of a pending execution re-reads
 * it through the run's own fold (no summary read, no snapshot read, since a pending execution
 * never ran), and a queue's claim folds the execution instead of first trying its seq 0. The
 * reads are counted at the store boundary of a real SQLite file; the safety the re-read gave
 * (an execution that moved on since the listing is left alone) still holds.
 */
import { Supervisor } from '@skein/worker-runtime-local';
import {
  defineQueue,
  defineWorkflow,
  InvalidInputError,
  type Runtime,
  type Stores,
} from '@skein/workflow-runtime';
import { executionLeaseKey } from '@skein/workflow-runtime/internal';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { count, deferred, harness, types, until } from './support/sqlite.js';

const h = harness();
let gate = deferred();

const quick = defineWorkflow({
  name: 'quick',
  input: z.object({}),
  async run(ctx) {
    return ctx.step('only', () => 'done');
  },
});
const held = defineWorkflow({
  name: 'held',
  input: z.object({}),
  async run(ctx) {
    return ctx.step('wait', async () => {
      await gate.promise;
      return 'done';
    });
  },
});

/** Calls per method name of the stores' event, snapshot and queue stores. */
function counted(stores: Stores): {
  stores: Stores;
  calls: Map<string, number>;
  appendsAtZero: () => number;
} {
  const calls = new Map<string, number>();
  let atZero = 0;
  const wrap = <T extends object>(target: T, prefix: string): T =>
    new Proxy(target, {
      get(inner, key, receiver) {
        const value = Reflect.get(inner, key, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          const name = `${prefix}.${String(key)}`;
          calls.set(name, (calls.get(name) ?? 0) + 1);
          if (name === 'events.append' && (args[0] as { expectedSeq: number }).expectedSeq === 0) atZero += 1;
          return (value as (...a: unknown[]) => unknown).apply(inner, args);
        };
      },
    });
  return {
    stores: {
      ...stores,
      events: wrap(stores.events, 'events'),
      snapshots: wrap(stores.snapshots, 'snapshots'),
      ...(stores.queues === undefined ? {} : { queues: wrap(stores.queues, 'queues') }),
    },
    calls,
    appendsAtZero: () => atZero,
  };
}

function supervise(runtime: Runtime, stores: Stores): Supervisor {
  return new Supervisor({ runtime, stores, leaseTtlMs: 30_000, tickIntervalMs: 1_000, concurrency: 10 });
}

describe('a claim reads only what it must', () => {
  it('claimed pending executions are taken over in one batch: no summary, snapshot or per-execution read, no fence of their own', async () => {
    const db = h.db();
    const enqueuer = h.runtime({ stores: db.stores, workflows: [quick], maintenance: false });
    for (let i = 0; i < 5; i++) await enqueuer.enqueue(quick, {}, { executionId: `plain-${i}` });
    const { stores, calls } = counted(db.stores);
    const runtime = h.runtime({ stores, workflows: [quick], lease: { ttlMs: 30_000 } });
    const supervisor = supervise(runtime, stores);
    const report = await supervisor.tick();
    await supervisor.idle();
    expect(report.claimed.sort()).toEqual(['plain-0', 'plain-1', 'plain-2', 'plain-3', 'plain-4']);
    expect(calls.get('events.getExecution') ?? 0).toBe(0);
    expect(calls.get('snapshots.latest') ?? 0).toBe(0);
    // One batch: the fence and the log of all five in one call; each run folds that log.
    expect(calls.get('events.takeOverPending')).toBe(1);
    expect(calls.get('events.read') ?? 0).toBe(0);
    expect(calls.get('events.acquireFence') ?? 0).toBe(0);
    for (let i = 0; i < 5; i++)
      expect((await db.stores.events.read(`plain-${i}`, 0)).map((event) => event.type)).toEqual([
        'EXECUTION_STARTED',
        'EXECUTION_RECOVERED',
        'STEP_STARTED',
        'STEP_COMPLETED',
        'EXECUTION_COMPLETED',
      ]);
    await supervisor.stop();
  });

  it('a running supervisor claims up to concurrency ahead of its free slots and starts them as runs end', async () => {
    gate = deferred();
    const db = h.db();
    const enqueuer = h.runtime({ stores: db.stores, workflows: [held], maintenance: false });
    const ids = Array.from({ length: 6 }, (_, i) => `ahead-${i}`);
    for (const id of ids) await enqueuer.enqueue(held, {}, { executionId: id });
    const runtime = h.runtime({ stores: db.stores, workflows: [held], lease: { ttlMs: 30_000 } });
    const supervisor = new Supervisor({
      runtime,
      stores: db.stores,
      leaseTtlMs: 30_000,
      tickIntervalMs: 20_000,
      concurrency: 2,
    });
    const leased = async () =>
      (await Promise.all(ids.map((id) => db.stores.leases.get(executionLeaseKey(id))))).filter(
        (lease) => lease !== null,
      ).length;
    const statuses = async () =>
      Promise.all(ids.map(async (id) => (await db.stores.events.getExecution(id))!.status));
    supervisor.start();
    try {
      await until(async () => (await statuses()).filter((status) => status === 'running').length === 2);
      await until(async () => (await leased()) === 4);
      // Two run, two more are claimed and wait for a slot; the last two are left for a node with room.
      expect((await statuses()).filter((status) => status === 'pending')).toHaveLength(4);
      gate.resolve();
      await until(async () => (await statuses()).every((status) => status === 'completed'));
    } finally {
      await supervisor.stop();
    }
    expect(await leased()).toBe(0);
    for (const id of ids) expect(count(await runtime.history(id), 'EXECUTION_RECOVERED')).toBe(1);
    expect(h.backgroundErrors).toEqual([]);
  });

  it('a claim of an execution that started running since the listing writes nothing', async () => {
    gate = deferred();
    const db = h.db();
    const other = h.runtime({ stores: db.stores, workflows: [held], maintenance: false });
    await other.enqueue(held, {}, { executionId: 'moved-1' });
    // Another node runs it (no lease row yet: a run claims its lease at its first renewal) between
    // this node's listing and its lease claim.
    let running: Promise<unknown> | undefined;
    const leases: Stores['leases'] = new Proxy(db.stores.leases, {
      get(inner, key, receiver) {
        const value = Reflect.get(inner, key, receiver);
        if (key !== 'claim' || typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          if (running === undefined && args[0] === executionLeaseKey('moved-1')) {
            running = other.execute({ executionId: 'moved-1', workflow: 'held' });
            await until(async () => (await db.stores.events.getExecution('moved-1'))?.status === 'running');
          }
          return (value as (...a: unknown[]) => unknown).apply(inner, args);
        };
      },
    });
    const stores = { ...db.stores, leases };
    const runtime = h.runtime({ stores, workflows: [held], lease: { ttlMs: 30_000 } });
    const supervisor = supervise(runtime, stores);
    await supervisor.tick();
    await supervisor.idle();
    gate.resolve();
    await running;
    const log = await other.history('moved-1');
    expect(count(log, 'EXECUTION_RECOVERED')).toBe(1); // the other node's takeover only
    expect(log.every((event) => event.fence === log[1]!.fence || event.seq === 0)).toBe(true);
    expect(types(log).at(-1)).toBe('EXECUTION_COMPLETED');
    expect(h.backgroundErrors).toEqual([]);
    await supervisor.stop();
  });

  it("a queue's claim folds its execution instead of first trying seq 0", async () => {
    const db = h.db();
    const q = defineQueue({ name: 'q', concurrency: 2 });
    const { stores, appendsAtZero } = counted(db.stores);
    const runtime = h.runtime({ stores, workflows: [quick], queues: [q], lease: { ttlMs: 30_000 } });
    const handles = [];
    for (let i = 0; i < 4; i++)
      handles.push(await runtime.enqueue(quick, {}, { executionId: `q-${i}`, queue: q }));
    expect(appendsAtZero()).toBe(4); // the enqueues' seq 0
    const supervisor = supervise(runtime, stores);
    supervisor.start();
    try {
      expect(await Promise.all(handles.map((handle) => handle.result()))).toEqual([
        'done',
        'done',
        'done',
        'done',
      ]);
    } finally {
      await supervisor.stop();
    }
    expect(appendsAtZero()).toBe(4); // no claimer tried seq 0 again
    expect(h.backgroundErrors).toEqual([]);
  });

  it("a queue item is deleted once at its execution's end; an execution in no queue deletes none", async () => {
    const db = h.db();
    const q = defineQueue({ name: 'q', concurrency: 2 });
    const { stores, calls } = counted(db.stores);
    const runtime = h.runtime({ stores, workflows: [quick], queues: [q], lease: { ttlMs: 30_000 } });
    const handles = [];
    for (let i = 0; i < 4; i++) {
      handles.push(await runtime.enqueue(quick, {}, { executionId: `in-${i}`, queue: q }));
      handles.push(await runtime.enqueue(quick, {}, { executionId: `plain-${i}` }));
    }
    const supervisor = supervise(runtime, stores);
    supervisor.start();
    try {
      expect(new Set(await Promise.all(handles.map((handle) => handle.result())))).toEqual(new Set(['done']));
    } finally {
      await supervisor.stop();
    }
    expect(calls.get('queues.finish')).toBe(4);
    for (let i = 0; i < 4; i++) expect(await db.stores.queues!.get(`in-${i}`)).toBeNull();
    expect(h.backgroundErrors).toEqual([]);
  });

  it("a queue's item claimed before its seq 0 was written is started from the item", async () => {
    const db = h.db();
    const q = defineQueue({ name: 'q', concurrency: 2 });
    const runtime = h.runtime({
      stores: db.stores,
      workflows: [quick],
      queues: [q],
      lease: { ttlMs: 30_000 },
    });
    // As an enqueuer that died between its item and seq 0 leaves it.
    await db.stores.queues!.enqueue({
      executionId: 'orphan-1',
      queue: 'q',
      partitionKey: '',
      priority: 0,
      workflow: 'quick',
      version: 1,
      input: '{}',
      enqueuedAt: 0,
      availableAt: 0,
    });
    const supervisor = supervise(runtime, db.stores);
    supervisor.start();
    try {
      await until(async () => (await db.stores.events.getExecution('orphan-1'))?.status === 'completed');
    } finally {
      await supervisor.stop();
    }
    expect(types(await runtime.history('orphan-1'))).toEqual([
      'EXECUTION_STARTED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'EXECUTION_COMPLETED',
    ]);
    expect(await db.stores.queues!.get('orphan-1')).toBeNull();
  });

  it('execute refuses a malformed expect before writing anything', async () => {
    const db = h.db();
    const runtime = h.runtime({ stores: db.stores, workflows: [quick], maintenance: false });
    await runtime.enqueue(quick, {}, { executionId: 'bad-1' });
    const bad = { expect: { status: 'done' } } as unknown as Parameters<Runtime['execute']>[1];
    const error = await runtime.execute({ executionId: 'bad-1', workflow: 'quick' }, bad).catch((e) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(String(error.message)).toMatch(/expect/);
    expect(types(await runtime.history('bad-1'))).toEqual(['EXECUTION_STARTED']);
  });
});
