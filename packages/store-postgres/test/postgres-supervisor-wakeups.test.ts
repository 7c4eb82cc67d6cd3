/**
 * Prompt wake-ups across connections: a Supervisor polling every 10 s, given `stores.wakeups`,
 * resumes an execution soon after its timer is due or its signal arrives through another
 * connection (LISTEN/NOTIFY), and runs an execution another node enqueued, not at its next poll.
 */
import { openPostgresStores, type PostgresStores, WAKEUP_PENDING } from '@skein/store-postgres';
import { assertInvariants } from '@skein/testkit';
import { Supervisor } from '@skein/worker-runtime-local';
import {
  createRuntime,
  defineWorkflow,
  type EventStore,
  ExecutionAlreadyExistsError,
  type Runtime,
  StaleFenceError,
} from '@skein/workflow-runtime';
import { encode, newId } from '@skein/workflow-runtime/internal';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { dropSchema, freshSchema, PG_URL, whenPostgres } from './support/pg.js';

const TICK_MS = 10_000;
/** Well under the tick interval: a poll could not have done it. */
const BOUND_MS = 3_000;
/** The bound for pick-up of enqueued work. */
const PENDING_BOUND_MS = 2_000;

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
    return (await ctx.waitForSignal('approve')) ? 'approved' : 'rejected';
  },
});
const greeter = defineWorkflow({
  name: 'greeter',
  input: z.object({ name: z.string() }),
  async run(ctx, input) {
    return ctx.step('greet', () => `hello ${input.name}`);
  },
});
const instant = defineWorkflow({ name: 'instant', input: z.object({}), run: async () => 'done' });
const workflows = [napper, approval, greeter, instant];

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  // Every closer runs (the schema is always dropped); the first failure is reported after.
  const results = [];
  for (const close of closers.splice(0).reverse())
    results.push(
      await close().then(
        () => null,
        (e: unknown) => e,
      ),
    );
  const failure = results.find((result) => result !== null);
  if (failure !== undefined) throw failure;
});

interface Node {
  stores: PostgresStores;
  runtime: Runtime;
  errors: unknown[];
}

/** One "process": its own pool (and LISTEN connection) on the shared schema. */
async function node(schema: string): Promise<Node> {
  const stores = await openPostgresStores({ url: PG_URL, schema, poolSize: 3 });
  const errors: unknown[] = [];
  const runtime = createRuntime({
    stores,
    workflows,
    lease: { ttlMs: 30_000 },
    onError: (e) => errors.push(e),
  });
  closers.push(async () => {
    await runtime.close();
    await stores.close();
  });
  return { stores, runtime, errors };
}

/** A node whose supervisor polls every 10 s, listens to wake-ups, and leads. */
async function supervisedNode(schema: string): Promise<Node> {
  const n = await node(schema);
  const supervisor = new Supervisor({
    runtime: n.runtime,
    stores: n.stores,
    leaseTtlMs: 30_000,
    tickIntervalMs: TICK_MS,
    wakeups: n.stores.wakeups,
    onError: (e) => n.errors.push(e),
  });
  supervisor.start();
  closers.push(() => supervisor.stop());
  await supervisor.listening();
  await until(async () => (await n.stores.leases.get('supervisor:leader')) !== null, BOUND_MS);
  return n;
}

/** Delegates to `inner` and counts finished listings of pending executions: one per supervisor tick. */
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

async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const statusOf = async (runtime: Runtime, id: string) => (await runtime.loadState(id))?.status;

whenPostgres(() => {
  describe('supervisor wake-ups on PostgreSQL', () => {
    function newSchema(): string {
      const schema = freshSchema();
      closers.push(() => dropSchema(schema));
      return schema;
    }

    it('a timer due in 200 ms, scheduled by another node, is fired within a bound far below the 10 s poll', async () => {
      const schema = newSchema();
      const supervised = await supervisedNode(schema);
      const owner = await node(schema);
      await owner.runtime.start(napper, {}, { executionId: 'nap-1' });
      await until(async () => (await statusOf(owner.runtime, 'nap-1')) === 'suspended', BOUND_MS);
      await owner.runtime.close(); // its in-process wake-up is gone: only the supervisor can fire the timer
      const dueAt = (await supervised.runtime.loadState('nap-1'))!.timers[0]!.dueAt;
      await until(async () => (await statusOf(supervised.runtime, 'nap-1')) === 'completed', BOUND_MS);
      const log = await supervised.runtime.history('nap-1');
      assertInvariants(log);
      const fired = log.find((event) => event.type === 'TIMER_FIRED')!;
      expect(fired.recordedAt.getTime()).toBeGreaterThanOrEqual(dueAt);
      expect(fired.recordedAt.getTime() - dueAt).toBeLessThan(BOUND_MS);
      expect(supervised.errors).toEqual([]);
    });

    it('a signal written to the inbox through another connection resumes the execution within the bound', async () => {
      const schema = newSchema();
      const supervised = await supervisedNode(schema);
      const owner = await node(schema);
      await owner.runtime.start(approval, {}, { executionId: 'ask-1' });
      await until(async () => (await statusOf(owner.runtime, 'ask-1')) === 'suspended', BOUND_MS);
      // A sender that wrote the inbox and never woke the execution (it died, or runs no such workflow).
      const sender = await openPostgresStores({ url: PG_URL, schema, poolSize: 1 });
      closers.push(() => sender.close());
      await sender.signals.send({
        signalId: 'sig-1',
        executionId: 'ask-1',
        name: 'approve',
        payload: encode(true),
        sentAt: Date.now(),
      });
      await until(async () => (await statusOf(supervised.runtime, 'ask-1')) === 'completed', BOUND_MS);
      const log = await supervised.runtime.history('ask-1');
      assertInvariants(log);
      expect(log.map((event) => event.type)).toEqual([
        'EXECUTION_STARTED',
        'EXECUTION_SUSPENDED',
        'EXECUTION_RESUMED',
        'SIGNAL_RECEIVED',
        'EXECUTION_COMPLETED',
      ]);
      expect(log.at(-1)!.payload).toMatchObject({ output: 'approved' });
      expect(supervised.errors).toEqual([]);
    });

    it('runtime.signal on another node and the supervisor’s wake-up resume the execution once', async () => {
      const schema = newSchema();
      const supervised = await supervisedNode(schema);
      const owner = await node(schema);
      for (let i = 0; i < 10; i++) await owner.runtime.start(approval, {}, { executionId: `ask-${i}` });
      for (let i = 0; i < 10; i++)
        await until(async () => (await statusOf(owner.runtime, `ask-${i}`)) === 'suspended', BOUND_MS);
      for (let i = 0; i < 10; i++) await owner.runtime.signal(`ask-${i}`, 'approve', i % 2 === 0);
      for (let i = 0; i < 10; i++) {
        await until(async () => (await statusOf(owner.runtime, `ask-${i}`)) === 'completed', BOUND_MS);
        const log = await owner.runtime.history(`ask-${i}`);
        assertInvariants(log);
        expect(log.filter((event) => event.type === 'EXECUTION_RESUMED')).toHaveLength(1);
        expect(log.at(-1)!.payload).toMatchObject({ output: i % 2 === 0 ? 'approved' : 'rejected' });
      }
      expect({ owner: owner.errors, supervisor: supervised.errors }).toEqual({ owner: [], supervisor: [] });
    });

    it('an execution enqueued on one node is run by another node’s supervisor within 2 s, not at its 10 s poll', async () => {
      const schema = newSchema();
      const b = await node(schema);
      const listings = new PendingListings(b.stores.events);
      const supervisor = new Supervisor({
        runtime: b.runtime,
        stores: { ...b.stores, events: listings },
        leaseTtlMs: 30_000,
        tickIntervalMs: TICK_MS,
        wakeups: b.stores.wakeups,
        onError: (e) => b.errors.push(e),
      });
      supervisor.start();
      closers.push(() => supervisor.stop());
      await supervisor.listening();
      // B's first tick has listed pending work (none): only the wake-up, or the poll 10 s on, finds more.
      await until(async () => listings.count === 1, PENDING_BOUND_MS);
      const a = await node(schema);
      await a.runtime.enqueue(greeter, { name: 'ada' }, { executionId: 'job-1' });
      await a.runtime.close(); // A only enqueued: nothing of it runs the execution
      await until(async () => (await statusOf(b.runtime, 'job-1')) === 'completed', PENDING_BOUND_MS);
      const log = await b.runtime.history('job-1');
      assertInvariants(log);
      expect(log.map((event) => event.type)).toEqual([
        'EXECUTION_STARTED',
        'EXECUTION_RECOVERED',
        'STEP_STARTED',
        'STEP_COMPLETED',
        'EXECUTION_COMPLETED',
      ]);
      expect(log[1]!.payload).toMatchObject({ reason: 'taken over from status pending' });
      expect(log.at(-1)!.payload).toMatchObject({ output: 'hello ada' });
      expect(log[1]!.recordedAt.getTime() - log[0]!.recordedAt.getTime()).toBeLessThan(PENDING_BOUND_MS);
      expect(listings.count).toBe(2);
      expect(b.errors).toEqual([]);
    });

    it('only an enqueue notifies "pending": a start that runs the execution and a refused seq 0 do not', async () => {
      const schema = newSchema();
      const a = await node(schema);
      const heard: string[] = [];
      closers.push(await a.stores.wakeups.subscribe(WAKEUP_PENDING, (id) => heard.push(id)));
      // The runtime's start-up maintenance pass ends first: a pass still listing pending work
      // would claim and run queued-1 (the next pass is a second away).
      await a.runtime.maintain();
      await a.runtime.enqueue(greeter, { name: 'ada' }, { executionId: 'queued-1' });
      // Seq 0 with the first step's events (running), with the whole run (completed), with a wait (suspended).
      await (await a.runtime.start(greeter, { name: 'bo' }, { executionId: 'run-1' })).result();
      await (await a.runtime.start(instant, {}, { executionId: 'run-2' })).result();
      await a.runtime.start(approval, {}, { executionId: 'run-3' });
      await until(async () => (await statusOf(a.runtime, 'run-3')) === 'suspended', PENDING_BOUND_MS);
      // Refused seq-0 appends: the id is taken (the runtime's enqueue treats it as done), a stale fence.
      await a.runtime.enqueue(greeter, { name: 'ada' }, { executionId: 'queued-1' });
      const started = (executionId: string, fence: number) =>
        a.stores.events.append({
          executionId,
          workflow: 'greeter',
          expectedSeq: 0,
          fence,
          events: [
            {
              envelopeId: newId(),
              type: 'EXECUTION_STARTED',
              payload: encode({ workflow: 'greeter', version: 1, input: { name: 'cy' } }),
              recordedAt: Date.now(),
            },
          ],
        });
      await expect(started('queued-1', 0)).rejects.toBeInstanceOf(ExecutionAlreadyExistsError);
      const fence = await a.stores.events.acquireFence('fenced-1');
      await expect(started('fenced-1', fence - 1)).rejects.toBeInstanceOf(StaleFenceError);
      expect(await a.runtime.history('queued-1')).toHaveLength(1);
      expect(await a.stores.events.read('fenced-1')).toEqual([]);
      // Notifications arrive in commit order: once the last enqueue's is heard, any earlier one would have been.
      await a.runtime.enqueue(greeter, { name: 'di' }, { executionId: 'queued-2' });
      await until(async () => heard.includes('queued-2'), PENDING_BOUND_MS);
      expect(heard).toEqual(['queued-1', 'queued-2']);
    });
  });
});
