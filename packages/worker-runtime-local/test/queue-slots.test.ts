/**
 * Every run of a queue's execution holds a slot of its queue (docs/queues.md#slots): a resume
 * from any runtime on the file (one that registers no queues too), `runtime.resume` of a failed
 * one, a continue-as-new successor (which stays in its queue, in its partition). And the
 * accounting around it: a suspension of an execution in no queue gives nothing back, and an
 * item left behind by an execution that ended is deleted by the claim that finds it, nothing
 * run again. Two runtimes on one SQLite file, as two processes would share it.
 */
import { Supervisor } from '@skein/worker-runtime-local';
import {
  createClient,
  defineQueue,
  defineWorkflow,
  type QueueDefinition,
  type Stores,
} from '@skein/workflow-runtime';
import type { QueueItem } from '@skein/workflow-runtime/spi';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { slotGauge, suspendingWorkflows } from './support/slot-gauge.js';
import { harness, until } from './support/sqlite.js';

const h = harness();

/** Steps of the queue's executions running right now, and the most seen at once. */
const gauge = slotGauge();
const { measured } = gauge;
const { napper, waiter } = suspendingWorkflows(measured, 40);

/** Fails its one attempt while `flaky.broken`; a `runtime.resume` then runs it again. */
const flaky = { broken: true };
const fragile = defineWorkflow({
  name: 'fragile',
  input: z.object({}),
  async run(ctx) {
    await ctx.step(
      'call',
      async () => {
        await measured(40);
        if (flaky.broken) throw new Error('service down');
      },
      { retry: { maxAttempts: 1 } },
    );
    return 'fragile';
  },
});

/** A step, then continues once as generation 1, which does a step and returns. */
const chain = defineWorkflow({
  name: 'chain',
  input: z.object({ generation: z.number() }),
  async run(ctx, input): Promise<string> {
    await ctx.step('work', () => measured(40));
    if (input.generation === 0) return ctx.continueAsNew({ generation: 1 });
    return 'chained';
  },
});

/** One step. */
const plain = defineWorkflow({
  name: 'plain',
  input: z.object({}),
  async run(ctx) {
    await ctx.step('work', () => 'done');
    return 'plain';
  },
});

/** A quick step, then a measured one: a fork from `work` runs the measured step again. */
const twice = defineWorkflow({
  name: 'twice',
  input: z.object({}),
  async run(ctx) {
    await ctx.step('prep', () => 'prepared');
    await ctx.step('work', () => measured(40));
    return 'twice';
  },
});

const workflows = [napper, waiter, fragile, chain, plain, twice];

function node(stores: Stores, queues: QueueDefinition[], supervised = true) {
  const runtime = h.runtime({ stores, workflows, queues, lease: { ttlMs: 2_000 }, maintenance: false });
  const supervisor = supervised
    ? new Supervisor({
        runtime,
        stores,
        tickIntervalMs: 20,
        onError: (error) => h.backgroundErrors.push(error),
      })
    : undefined;
  return { runtime, supervisor };
}

describe('every run of a queue execution holds a slot', () => {
  it('resumed at once from a runtime that registers no queues: never more than one running, all finish', async () => {
    gauge.reset();
    const db = h.db();
    const q = defineQueue({ name: 'one', concurrency: 1 });
    const a = node(db.stores, [q]);
    // Runtime b shares the file but knows no queue and runs no supervisor: it sends the signals
    // and wakes the sleepers, all at once.
    const b = node(db.connect(), [], false);
    const ids = ['w1', 'w2', 'w3', 'n1', 'n2', 'n3'];
    const handles = [];
    for (const id of ids.slice(0, 3))
      handles.push(await a.runtime.enqueue(waiter, {}, { executionId: id, queue: q }));
    for (const id of ids.slice(3))
      handles.push(await a.runtime.enqueue(napper, { ms: 100 }, { executionId: id, queue: q }));
    a.supervisor?.start();
    try {
      await until(async () => {
        const entries = await Promise.all(ids.map((id) => db.stores.queues?.get(id)));
        return entries.every((entry) => entry?.state === 'suspended');
      }, 10_000);
      // The sleepers' timers are due by now: b wakes them, and signals the waiters.
      await until(async () => {
        const states = await Promise.all(ids.slice(3).map((id) => b.runtime.loadState(id)));
        return states.every((state) => state?.timers.every((timer) => timer.dueAt <= Date.now()));
      }, 5_000);
      await Promise.all([
        ...ids.slice(0, 3).map((id) => b.runtime.signal(id, 'go', true)),
        ...ids.slice(3).map((id) => b.runtime.wake(id)),
      ]);
      expect(await Promise.all(handles.map((handle) => handle.result()))).toEqual([
        'waiter',
        'waiter',
        'waiter',
        'napper',
        'napper',
        'napper',
      ]);
    } finally {
      await a.supervisor?.stop();
    }
    expect(gauge.max).toBe(1);
    for (const id of ids) expect(await db.stores.queues?.get(id)).toBeNull();
    expect(h.backgroundErrors).toEqual([]);
  });

  it('runtime.resume of failed executions of a queue: they go back to the queue and run one at a time', async () => {
    gauge.reset();
    flaky.broken = true;
    const db = h.db();
    const q = defineQueue({ name: 'one', concurrency: 1 });
    const a = node(db.stores, [q]);
    const b = node(db.connect(), [], false);
    const ids = ['f1', 'f2', 'f3'];
    for (const id of ids) await a.runtime.enqueue(fragile, {}, { executionId: id, queue: q });
    a.supervisor?.start();
    try {
      await until(async () => {
        const states = await Promise.all(ids.map((id) => a.runtime.loadState(id)));
        return states.every((state) => state?.status === 'failed');
      }, 10_000);
      for (const id of ids) expect(await db.stores.queues?.get(id)).toBeNull();
      flaky.broken = false;
      gauge.reset();
      await Promise.all(ids.map((id) => b.runtime.resume(id, { reason: 'service back' })));
      // Each one is back in its queue (its item written again from seq 0), none run by b.
      await until(async () => {
        const states = await Promise.all(ids.map((id) => a.runtime.loadState(id)));
        return states.every((state) => state?.status === 'completed');
      }, 10_000);
    } finally {
      await a.supervisor?.stop();
    }
    expect(gauge.max).toBe(1);
    for (const id of ids) expect(await db.stores.queues?.get(id)).toBeNull();
    expect(h.backgroundErrors).toEqual([]);
  });

  it('a continue-as-new successor stays in its queue and partition: the chains never run two at once', async () => {
    gauge.reset();
    const db = h.db();
    const q = defineQueue({ name: 'one', concurrency: 1, priority: true });
    const a = node(db.stores, [q]);
    const b = node(db.connect(), [q]);
    const roots = ['c1', 'c2', 'c3'];
    const handles = [];
    for (const id of roots)
      handles.push(
        await a.runtime.enqueue(
          chain,
          { generation: 0 },
          { executionId: id, queue: q, partitionKey: 'p', priority: 3 },
        ),
      );
    a.supervisor?.start();
    b.supervisor?.start();
    try {
      expect(await Promise.all(handles.map((handle) => handle.result()))).toEqual([
        'chained',
        'chained',
        'chained',
      ]);
    } finally {
      await Promise.all([a.supervisor?.stop(), b.supervisor?.stop()]);
    }
    expect(gauge.max).toBe(1);
    for (const id of roots) {
      const successor = await a.runtime.loadState(`${id}~1`);
      expect(successor?.status).toBe('completed');
      expect([successor?.queue, successor?.partitionKey, successor?.priority]).toEqual(['one', 'p', 3]);
      expect(await db.stores.queues?.get(id)).toBeNull();
      expect(await db.stores.queues?.get(`${id}~1`)).toBeNull();
    }
    expect(h.backgroundErrors).toEqual([]);
  });

  it('a fork of a queue execution joins its queue, partition and priority: forks never run two at once', async () => {
    gauge.reset();
    const db = h.db();
    const q = defineQueue({ name: 'one', concurrency: 1, priority: true });
    const a = node(db.stores, [q]);
    a.supervisor?.start();
    try {
      const source = await a.runtime.enqueue(
        twice,
        {},
        { executionId: 'src', queue: q, partitionKey: 'p', priority: 2 },
      );
      expect(await source.result()).toBe('twice');
      gauge.reset();
      // Three forks from the runtime (which would run each at once) and one written by a client.
      const client = createClient({ stores: db.connect(), workflows });
      const forks = await Promise.all([
        ...['k1', 'k2', 'k3'].map((id) => a.runtime.fork('src', { fromStep: 'work', executionId: id })),
        client.fork('src', { fromStep: 'work', executionId: 'k4' }),
      ]);
      expect(await Promise.all(forks.map((fork) => fork.result()))).toEqual([
        'twice',
        'twice',
        'twice',
        'twice',
      ]);
    } finally {
      await a.supervisor?.stop();
    }
    expect(gauge.max).toBe(1);
    for (const id of ['k1', 'k2', 'k3', 'k4']) {
      const fork = await a.runtime.loadState(id);
      expect([fork?.queue, fork?.partitionKey, fork?.priority]).toEqual(['one', 'p', 2]);
      expect(await db.stores.queues?.get(id)).toBeNull();
    }
    expect(h.backgroundErrors).toEqual([]);
  });

  it('a suspension gives a slot back only for an execution in a queue (no release for one in none)', async () => {
    const db = h.db();
    const q = defineQueue({ name: 'one', concurrency: 1 });
    const a = node(db.stores, [q]);
    const queues = db.stores.queues;
    if (queues === undefined) throw new Error('no queue store');
    const release = vi.spyOn(queues, 'release');
    const free = await a.runtime.start(napper, { ms: 50 }, { executionId: 'free' });
    expect(await free.result()).toBe('napper');
    expect(release).not.toHaveBeenCalled();
    a.supervisor?.start();
    try {
      const queued = await a.runtime.enqueue(napper, { ms: 50 }, { executionId: 'queued', queue: q });
      expect(await queued.result()).toBe('napper');
    } finally {
      await a.supervisor?.stop();
    }
    expect(
      release.mock.calls.filter(([id, , to]) => id === 'queued' && to.state === 'suspended'),
    ).toHaveLength(1);
    expect(release.mock.calls.filter(([id]) => id === 'free')).toHaveLength(0);
  });
});

describe('an item left behind by an execution that ended', () => {
  /** The item an enqueue of `executionId` would write. */
  function itemFor(executionId: string, workflow: string): QueueItem {
    const now = Date.now();
    return {
      executionId,
      queue: 'one',
      partitionKey: '',
      priority: 0,
      workflow,
      version: 1,
      input: '{}',
      enqueuedAt: now,
      availableAt: now,
    };
  }

  it.each([
    ['its seq 0 names the queue (a crash between the end and the delete)', true],
    ['its seq 0 names none (an older log)', false],
  ])('%s: the claim deletes it and frees the slot, nothing runs again', async (_, named) => {
    const db = h.db();
    const q = defineQueue({ name: 'one', concurrency: 1 });
    const a = node(db.stores, [q]);
    const queues = db.stores.queues;
    if (queues === undefined) throw new Error('no queue store');
    // The execution ran to its end; then its item is there again, as if the delete never ran.
    if (named) {
      a.supervisor?.start();
      expect(await (await a.runtime.enqueue(plain, {}, { executionId: 'ended', queue: q })).result()).toBe(
        'plain',
      );
      await a.supervisor?.stop();
    } else expect(await (await a.runtime.start(plain, {}, { executionId: 'ended' })).result()).toBe('plain');
    expect((await a.runtime.loadState('ended'))?.queue).toBe(named ? 'one' : undefined);
    await queues.enqueue(itemFor('ended', 'plain'));
    const before = await db.stores.events.read('ended', 0, 1_000);
    a.supervisor?.start();
    try {
      await until(async () => (await queues.get('ended')) === null, 5_000);
      // The slot is free: the next execution of the queue runs.
      expect(await (await a.runtime.enqueue(plain, {}, { executionId: 'next', queue: q })).result()).toBe(
        'plain',
      );
    } finally {
      await a.supervisor?.stop();
    }
    expect(await db.stores.events.read('ended', 0, 1_000)).toEqual(before);
    expect(h.backgroundErrors).toEqual([]);
  });
});
