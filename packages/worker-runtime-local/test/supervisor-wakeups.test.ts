/**
 * Prompt wake-ups: with a tick interval of 10 s, a timer notification makes the supervisor tick
 * at the timer's due time, a signal notification makes the leader resume the execution, and a
 * pending notification makes the supervisor claim an enqueued execution, all long before the
 * next poll. The source here is a fake that the test drives as a store
 * would; `packages/store-postgres/test/postgres-supervisor-wakeups.test.ts` does it with
 * LISTEN/NOTIFY.
 */
import { Supervisor, type WakeupSource } from '@skein/worker-runtime-local';
import {
  createRuntime,
  defineWorkflow,
  type EventStore,
  type Runtime,
  type Stores,
} from '@skein/workflow-runtime';
import { encode } from '@skein/workflow-runtime/internal';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { harness, types, until, withEvents } from './support/sqlite.js';

const h = harness();

const napper = defineWorkflow({
  name: 'napper',
  input: z.object({}),
  async run(ctx) {
    await ctx.sleep('nap', 200);
    return ctx.step('after-nap', () => 'rested');
  },
});
const approval = defineWorkflow({
  name: 'approval',
  input: z.object({}),
  signals: { approve: z.boolean() },
  async run(ctx) {
    const ok = await ctx.waitForSignal('approve');
    return ok ? 'approved' : 'rejected';
  },
});
const greeter = defineWorkflow({
  name: 'greeter',
  input: z.object({ name: z.string() }),
  async run(ctx, input) {
    return ctx.step('greet', () => `hello ${input.name}`);
  },
});
const workflows = [napper, approval, greeter];

/** A wake-up source the test notifies by hand. */
class FakeWakeups implements WakeupSource {
  readonly handlers = new Map<string, Set<(payload: string) => void>>();
  failSubscribe = false;
  async subscribe(channel: string, handler: (payload: string) => void): Promise<() => Promise<void>> {
    if (this.failSubscribe) throw new Error('LISTEN failed (simulated)');
    const set = this.handlers.get(channel) ?? new Set();
    set.add(handler);
    this.handlers.set(channel, set);
    return async () => void set.delete(handler);
  }
  notify(channel: string, payload: string): void {
    for (const handler of this.handlers.get(channel) ?? []) handler(payload);
  }
  subscriptions(): number {
    return [...this.handlers.values()].reduce((n, set) => n + set.size, 0);
  }
}

/** Delegates to `inner` and counts finished listings of pending executions: one per tick here. */
class PendingListings implements EventStore {
  count = 0;
  constructor(private readonly inner: EventStore) {}
  append: EventStore['append'] = (request) => this.inner.append(request);
  read: EventStore['read'] = (id, from, limit) => this.inner.read(id, from, limit);
  acquireFence: EventStore['acquireFence'] = (id) => this.inner.acquireFence(id);
  currentFence: EventStore['currentFence'] = (id) => this.inner.currentFence(id);
  getExecution: EventStore['getExecution'] = (id) => this.inner.getExecution(id);
  listExecutions: EventStore['listExecutions'] = async (query) => {
    const page = await this.inner.listExecutions(query);
    if (query?.status?.includes('pending')) this.count += 1;
    return page;
  };
}

/** Run `workflow` on a runtime that is closed once it suspends: only the supervisor can resume it. */
async function suspendedElsewhere(stores: Stores, workflow: typeof napper | typeof approval, id: string) {
  const owner = createRuntime({ stores, workflows, lease: { ttlMs: 30_000 } });
  await owner.start(workflow, {}, { executionId: id });
  await until(async () => (await owner.loadState(id))?.status === 'suspended');
  await owner.close();
}

function slowSupervisor(runtime: Runtime, stores: Stores, wakeups: WakeupSource, errors: string[] = []) {
  const supervisor = new Supervisor({
    runtime,
    stores,
    leaseTtlMs: 30_000,
    tickIntervalMs: 10_000,
    wakeups,
    onError: (error, context) => errors.push(`${context}: ${String(error)}`),
  });
  return supervisor;
}

describe('supervisor wake-ups', () => {
  it('a timer notification ticks at its due time instead of at the next poll, 10 s later', async () => {
    const { stores } = h.db();
    await suspendedElsewhere(stores, napper, 'nap-1');
    const runtime = h.runtime({ stores, workflows, lease: { ttlMs: 30_000 } });
    const wakeups = new FakeWakeups();
    const supervisor = slowSupervisor(runtime, stores, wakeups);
    supervisor.start();
    await supervisor.listening();
    const dueAt = (await runtime.loadState('nap-1'))!.timers[0]!.dueAt;
    wakeups.notify('timers', String(dueAt));
    await until(async () => (await runtime.loadState('nap-1'))?.status === 'completed', 3_000);
    await supervisor.stop();
    const log = await runtime.history('nap-1');
    expect(types(log).slice(-5)).toEqual([
      'EXECUTION_RESUMED',
      'TIMER_FIRED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'EXECUTION_COMPLETED',
    ]);
    const resumed = log.find((event) => event.type === 'EXECUTION_RESUMED')!;
    expect(resumed.recordedAt.getTime()).toBeGreaterThanOrEqual(dueAt);
  });

  it('a signal notification makes the leader resume an execution whose sender never woke it', async () => {
    const { stores } = h.db();
    await suspendedElsewhere(stores, approval, 'ask-1');
    const runtime = h.runtime({ stores, workflows, lease: { ttlMs: 30_000 } });
    const wakeups = new FakeWakeups();
    const supervisor = slowSupervisor(runtime, stores, wakeups);
    supervisor.start();
    await supervisor.listening();
    await until(async () => (await stores.leases.get('supervisor:leader')) !== null);
    // A sender that wrote the inbox and died before waking the execution.
    await stores.signals.send({
      signalId: 'sig-1',
      executionId: 'ask-1',
      name: 'approve',
      payload: encode(true),
      sentAt: Date.now(),
    });
    wakeups.notify('signals', 'ask-1');
    await until(async () => (await runtime.loadState('ask-1'))?.status === 'completed', 3_000);
    await supervisor.stop();
    const log = await runtime.history('ask-1');
    expect(types(log)).toEqual([
      'EXECUTION_STARTED',
      'EXECUTION_SUSPENDED',
      'EXECUTION_RESUMED',
      'SIGNAL_RECEIVED',
      'EXECUTION_COMPLETED',
    ]);
    expect(log.at(-1)!.payload).toMatchObject({ output: 'approved' });
    const resumed = log.find((event) => event.type === 'EXECUTION_RESUMED')!;
    expect(resumed.payload).toMatchObject({ reason: 'a wake-up: a signal or child it waits for arrived' });
  });

  it('a pending notification makes the supervisor claim and complete an enqueued execution within 2 s', async () => {
    const { stores } = h.db();
    const listings = new PendingListings(stores.events);
    const runtime = h.runtime({ stores, workflows, lease: { ttlMs: 30_000 } });
    const wakeups = new FakeWakeups();
    const errors: string[] = [];
    const supervisor = slowSupervisor(runtime, withEvents(stores, listings), wakeups, errors);
    supervisor.start();
    await supervisor.listening();
    // The first tick has listed pending work (none): from here only a wake-up or the poll 10 s on finds more.
    await until(() => listings.count === 1);
    const enqueuer = h.runtime({ stores, workflows, lease: { ttlMs: 30_000 } });
    await enqueuer.enqueue(greeter, { name: 'ada' }, { executionId: 'job-1' });
    expect((await runtime.loadState('job-1'))?.status).toBe('pending');
    wakeups.notify('pending', 'job-1');
    await until(async () => (await runtime.loadState('job-1'))?.status === 'completed', 2_000);
    await supervisor.stop();
    const log = await runtime.history('job-1');
    expect(types(log)).toEqual([
      'EXECUTION_STARTED',
      'EXECUTION_RECOVERED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'EXECUTION_COMPLETED',
    ]);
    expect(log[1]!.payload).toMatchObject({ reason: 'taken over from status pending' });
    expect(log.at(-1)!.payload).toMatchObject({ output: 'hello ada' });
    expect(listings.count).toBe(2);
    expect(errors).toEqual([]);
  });

  it('a burst of 100 pending notifications runs one more tick, not 100', async () => {
    const { stores } = h.db();
    const listings = new PendingListings(stores.events);
    const runtime = h.runtime({ stores, workflows, lease: { ttlMs: 30_000 } });
    const wakeups = new FakeWakeups();
    const supervisor = slowSupervisor(runtime, withEvents(stores, listings), wakeups);
    supervisor.start();
    await supervisor.listening();
    await until(() => listings.count === 1);
    for (let i = 0; i < 100; i++) wakeups.notify('pending', `job-${i}`);
    await until(() => listings.count >= 2);
    // Ticks on SQLite take milliseconds: uncoalesced, dozens more would run in this time.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await supervisor.stop();
    expect(listings.count).toBe(2);
  });

  it('with more pending work than slots, a slot that frees up claims the next at once, not at the next poll', async () => {
    const { stores } = h.db();
    const enqueuer = h.runtime({ stores, workflows, lease: { ttlMs: 30_000 } });
    for (let i = 0; i < 5; i++)
      await enqueuer.enqueue(greeter, { name: `n${i}` }, { executionId: `queued-${i}` });
    const runtime = h.runtime({ stores, workflows, lease: { ttlMs: 30_000 } });
    const supervisor = new Supervisor({
      runtime,
      stores,
      leaseTtlMs: 30_000,
      tickIntervalMs: 10_000,
      concurrency: 1,
    });
    supervisor.start();
    const ids = Array.from({ length: 5 }, (_, i) => `queued-${i}`);
    const done = async () =>
      (await Promise.all(ids.map((id) => runtime.loadState(id)))).every((s) => s?.status === 'completed');
    await until(done, 3_000);
    await supervisor.stop();
  });

  it('a malformed timer notification is reported, and a failed subscription leaves polling on', async () => {
    const { stores } = h.db();
    const runtime = h.runtime({ stores, workflows, lease: { ttlMs: 30_000 } });
    const wakeups = new FakeWakeups();
    const errors: string[] = [];
    const supervisor = slowSupervisor(runtime, stores, wakeups, errors);
    supervisor.start();
    await supervisor.listening();
    wakeups.notify('timers', 'soon');
    expect(errors).toEqual([
      'supervisor wake-ups: Error: supervisor wake-ups: "soon" on channel "timers" is not a due time',
    ]);
    await supervisor.stop();
    expect(wakeups.subscriptions()).toBe(0);

    const broken = new FakeWakeups();
    broken.failSubscribe = true;
    const polling = slowSupervisor(
      h.runtime({ stores, workflows, lease: { ttlMs: 30_000 } }),
      stores,
      broken,
      errors,
    );
    polling.start();
    await polling.listening();
    expect(errors.at(-1)).toBe(
      'supervisor wake-ups: subscribe (polling goes on): Error: LISTEN failed (simulated)',
    );
    await until(async () => (await stores.leases.get('supervisor:leader')) !== null);
    await polling.stop();
  });
});
