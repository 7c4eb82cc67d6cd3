/**
 * A client next to the nodes (docs/supervision.md#clients, docs/queues.md): on one SQLite file,
 * a client enqueues into a queue and signals its executions, and a runtime with a Supervisor
 * runs them within the queue's limits. A client never runs a body and holds no slot, so a
 * signal it sends to a suspended execution of a queue queues it again instead of resuming it.
 */
import { Supervisor } from '@skein/worker-runtime-local';
import {
  type Client,
  createClient,
  defineQueue,
  defineSchedule,
  defineWorkflow,
  type QueueDefinition,
  type Stores,
} from '@skein/workflow-runtime';
import { deliverSignal } from '@skein/workflow-runtime/internal';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { harness, until } from './support/sqlite.js';

const h = harness();
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

/** Steps of the queue's executions running right now, and the most seen at once. */
const gauge = { running: [] as string[], max: 0, overlaps: [] as string[][] };

function resetGauge(): void {
  gauge.running = [];
  gauge.max = 0;
  gauge.overlaps = [];
}

async function measured(executionId: string, ms: number): Promise<void> {
  gauge.running.push(executionId);
  gauge.max = Math.max(gauge.max, gauge.running.length);
  if (gauge.running.length > 1) gauge.overlaps.push([...gauge.running]);
  await new Promise((resolve) => setTimeout(resolve, ms));
  gauge.running.splice(gauge.running.indexOf(executionId), 1);
}

/** Holds its slot for `ms` in one step. */
const hog = defineWorkflow({
  name: 'hog',
  input: z.object({ ms: z.number() }),
  async run(ctx, input) {
    await ctx.step('work', () => measured(ctx.executionId, input.ms));
    return 'hog';
  },
});

/** A step, a wait for signal `go`, a step. */
const waiter = defineWorkflow({
  name: 'waiter',
  input: z.object({}),
  signals: { go: z.literal(true) },
  async run(ctx) {
    await ctx.step('before', () => measured(ctx.executionId, 5));
    await ctx.waitForSignal('go', { schema: z.literal(true) });
    await ctx.step('after', () => measured(ctx.executionId, 5));
    return 'waiter';
  },
});

const workflows = [hog, waiter];

function node(stores: Stores, queues: QueueDefinition[], ttlMs = 2_000) {
  const runtime = h.runtime({ stores, workflows, queues, lease: { ttlMs } });
  const supervisor = new Supervisor({
    runtime,
    stores,
    tickIntervalMs: 20,
    onError: (error) => h.backgroundErrors.push(error),
  });
  return { runtime, supervisor };
}

function client(options: Parameters<typeof createClient>[0]): Client {
  const opened = createClient(options);
  clients.push(opened);
  return opened;
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

describe('a client enqueues into a queue', () => {
  it('the runtime on the same file runs them within the queue limit (concurrency 1)', async () => {
    resetGauge();
    const db = h.db();
    const q = defineQueue({ name: 'one', concurrency: 1 });
    const web = client({ stores: db.connect(), workflows, queues: [q] });
    const ids = ['a', 'b', 'c', 'd'];
    const handles = [];
    for (const id of ids) handles.push(await web.enqueue(hog, { ms: 60 }, { executionId: id, queue: 'one' }));
    for (const id of ids) {
      expect((await db.stores.queues?.get(id))?.state).toBe('queued');
      expect((await web.loadState(id))?.status).toBe('pending');
    }
    const worker = node(db.stores, [q]);
    worker.supervisor.start();
    try {
      expect(await Promise.all(handles.map((handle) => handle.result()))).toEqual(ids.map(() => 'hog'));
    } finally {
      await worker.supervisor.stop();
    }
    expect(gauge.overlaps).toEqual([]);
    // The log agrees: no step started before the one before it completed.
    const spans = await Promise.all(
      ids.map(async (id) => ({
        started: await recordedAt(db.stores, id, 'STEP_STARTED'),
        completed: await recordedAt(db.stores, id, 'STEP_COMPLETED'),
      })),
    );
    spans.sort((x, y) => x.started - y.started);
    for (let i = 1; i < spans.length; i += 1)
      expect(spans[i]?.started).toBeGreaterThanOrEqual(spans[i - 1]?.completed ?? Number.POSITIVE_INFINITY);
    for (const id of ids) expect(await db.stores.queues?.get(id)).toBeNull();
    expect(h.backgroundErrors).toEqual([]);
  });

  it('refuses a queue it was not given, before writing anything', async () => {
    const db = h.db();
    const web = client({ stores: db.connect(), workflows });
    await expect(web.enqueue(hog, { ms: 1 }, { executionId: 'x', queue: 'one' })).rejects.toMatchObject({
      name: 'UnknownQueueError',
    });
    expect(await db.stores.queues?.get('x')).toBeNull();
    expect(await db.stores.events.getExecution('x')).toBeNull();
  });

  it('refuses queues or schedules over stores that keep none, naming createClient', async () => {
    const db = h.db();
    const q = defineQueue({ name: 'one', concurrency: 1 });
    const nightly = defineSchedule({ name: 'nightly', everyMs: 60_000, workflow: hog, input: { ms: 1 } });
    expect(() =>
      createClient({ stores: { ...db.stores, queues: undefined }, workflows, queues: [q] }),
    ).toThrow(/createClient options[\s\S]*stores\.queues/);
    expect(() =>
      createClient({ stores: { ...db.stores, schedules: undefined }, workflows, schedules: [nightly] }),
    ).toThrow(/createClient options[\s\S]*stores\.schedules/);
  });

  it('pauses and resumes a schedule for every node', async () => {
    const db = h.db();
    const nightly = defineSchedule({ name: 'nightly', everyMs: 60_000, workflow: hog, input: { ms: 1 } });
    const worker = h.runtime({ stores: db.stores, workflows, schedules: [nightly], maintenance: false });
    const web = client({ stores: db.connect(), workflows, schedules: [nightly] });
    expect((await web.pauseSchedule('nightly')).paused).toBe(true);
    expect((await worker.scheduleState('nightly'))?.paused).toBe(true);
    expect((await web.resumeSchedule('nightly')).paused).toBe(false);
    expect((await worker.scheduleState('nightly'))?.paused).toBe(false);
    expect((await web.scheduleState('nightly'))?.paused).toBe(false);
  });
});

/** How a test sends the signal: a client with or without the queue declared, or `deliverSignal` (the CLI's). */
const senders: { label: string; send(stores: Stores, q: QueueDefinition): Promise<unknown> }[] = [
  {
    label: "a client with 'log' hand-off, given the queue",
    send: (stores, q) =>
      client({ stores, workflows, queues: [q], signalHandOff: 'log' }).signal('wait', 'go', true),
  },
  {
    label: "a client with 'log' hand-off, not given the queue",
    send: (stores) => client({ stores, workflows, signalHandOff: 'log' }).signal('wait', 'go', true),
  },
  { label: 'deliverSignal', send: (stores) => deliverSignal(stores, 'wait', 'go', true) },
];

describe('a signal sent without a runtime to a suspended execution of a queue goes through the queue', () => {
  for (const sender of senders) {
    it(`${sender.label}: the execution waits for the only slot, held by another`, async () => {
      resetGauge();
      const db = h.db();
      const q = defineQueue({ name: 'one', concurrency: 1 });
      // A short lease: a hand-over through the log would be taken over long before the hog ends.
      const worker = node(db.stores, [q], 1_000);
      const waiting = await worker.runtime.enqueue(waiter, {}, { executionId: 'wait', queue: q });
      worker.supervisor.start();
      try {
        await until(async () => (await db.stores.queues?.get('wait'))?.state === 'suspended', 5_000);
        const holder = await worker.runtime.enqueue(hog, { ms: 3_000 }, { executionId: 'hog', queue: q });
        await until(async () => (await db.stores.queues?.get('hog'))?.state === 'running', 5_000);
        await sender.send(db.connect(), q);
        expect((await db.stores.queues?.get('wait'))?.state).toBe('queued');
        expect((await waiting.state())?.status).toBe('suspended');
        expect(await Promise.all([waiting.result(), holder.result()])).toEqual(['waiter', 'hog']);
      } finally {
        await worker.supervisor.stop();
      }
      expect(gauge.overlaps).toEqual([]);
      const hogDone = await recordedAt(db.stores, 'hog', 'STEP_COMPLETED');
      expect(await recordedAt(db.stores, 'wait', 'STEP_STARTED', 'after')).toBeGreaterThanOrEqual(hogDone);
      const log = await db.stores.events.read('wait', 0, 1_000);
      // One resume, by the node the queue admitted it to, after the slot freed.
      expect(log.filter((event) => event.type === 'EXECUTION_RESUMED')).toHaveLength(1);
      expect(h.backgroundErrors).toEqual([]);
    });
  }
});
