/**
 * Every run of a queue's execution holds a slot, on PostgreSQL (docs/queues.md#slots): two
 * runtimes on one schema, each with its own pool, as two processes would be. One runs a
 * Supervisor with the queue; the other registers no queue and signals, resumes and wakes.
 * A queue of one never runs two steps at once, and a continue-as-new chain stays in its queue.
 */
import { openPostgresStores, type PostgresStores } from '@skein/store-postgres';
import { Supervisor } from '@skein/worker-runtime-local';
import { createRuntime, defineQueue, defineWorkflow, type Runtime } from '@skein/workflow-runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openTestStores, PG_URL, whenPostgres } from './support/pg.js';

const gauge = { now: 0, max: 0 };

async function measured(ms: number): Promise<void> {
  gauge.now += 1;
  gauge.max = Math.max(gauge.max, gauge.now);
  await new Promise((resolve) => setTimeout(resolve, ms));
  gauge.now -= 1;
}

const waiter = defineWorkflow({
  name: 'waiter',
  input: z.object({}),
  signals: { go: z.literal(true) },
  async run(ctx) {
    await ctx.step('before', () => measured(5));
    await ctx.waitForSignal('go', { schema: z.literal(true) });
    await ctx.step('after', () => measured(40));
    return 'waiter';
  },
});

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

const chain = defineWorkflow({
  name: 'chain',
  input: z.object({ generation: z.number() }),
  async run(ctx, input): Promise<string> {
    await ctx.step('work', () => measured(40));
    if (input.generation === 0) return ctx.continueAsNew({ generation: 1 });
    return 'chained';
  },
});

const workflows = [waiter, fragile, chain];
const one = defineQueue({ name: 'one', concurrency: 1 });

const opened: { runtimes: Runtime[]; supervisors: Supervisor[]; stores: PostgresStores[] } = {
  runtimes: [],
  supervisors: [],
  stores: [],
};
const errors: unknown[] = [];

afterEach(async () => {
  await Promise.all(opened.supervisors.splice(0).map((s) => s.stop()));
  await Promise.all(opened.runtimes.splice(0).map((r) => r.close()));
  // The first stores drop the schema on close: close the others first.
  for (const stores of opened.stores.splice(0).reverse()) await stores.close();
  errors.length = 0;
});

/** Runtime a (the queue, a Supervisor) and runtime b (no queue, no Supervisor) on one fresh schema. */
async function pair(): Promise<{ a: Runtime; b: Runtime; stores: PostgresStores }> {
  const stores = await openTestStores({ poolSize: 4 });
  const other = await openPostgresStores({ url: PG_URL, schema: stores.schema, poolSize: 4 });
  opened.stores.push(stores, other);
  const onError = (error: unknown) => errors.push(error);
  const lease = { ttlMs: 2_000 };
  const a = createRuntime({ stores, workflows, queues: [one], lease, maintenance: false, onError });
  const b = createRuntime({ stores: other, workflows, lease, maintenance: false, onError });
  opened.runtimes.push(a, b);
  const supervisor = new Supervisor({ runtime: a, stores, tickIntervalMs: 20, onError });
  opened.supervisors.push(supervisor);
  supervisor.start();
  return { a, b, stores };
}

async function until(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

whenPostgres(() => {
  describe('every run of a queue execution holds a slot (PostgreSQL)', () => {
    it('signals sent at once from a runtime without the queue: one step at a time, all finish', async () => {
      gauge.now = 0;
      gauge.max = 0;
      const { a, b, stores } = await pair();
      const ids = ['w1', 'w2', 'w3', 'w4'];
      const handles = [];
      for (const id of ids) handles.push(await a.enqueue(waiter, {}, { executionId: id, queue: one }));
      await until(async () => {
        const entries = await Promise.all(ids.map((id) => stores.queues.get(id)));
        return entries.every((entry) => entry?.state === 'suspended');
      });
      await Promise.all(ids.map((id) => b.signal(id, 'go', true)));
      expect(await Promise.all(handles.map((h) => h.result()))).toEqual(ids.map(() => 'waiter'));
      expect(gauge.max).toBe(1);
      expect(errors).toEqual([]);
    });

    it('runtime.resume of failed executions puts them back in the queue: one at a time', async () => {
      gauge.now = 0;
      gauge.max = 0;
      flaky.broken = true;
      const { a, b, stores } = await pair();
      const ids = ['f1', 'f2', 'f3'];
      for (const id of ids) await a.enqueue(fragile, {}, { executionId: id, queue: one });
      await until(async () => {
        const states = await Promise.all(ids.map((id) => a.loadState(id)));
        return states.every((state) => state?.status === 'failed');
      });
      flaky.broken = false;
      gauge.max = 0;
      await Promise.all(ids.map((id) => b.resume(id, { reason: 'service back' })));
      await until(async () => {
        const states = await Promise.all(ids.map((id) => a.loadState(id)));
        return states.every((state) => state?.status === 'completed');
      });
      expect(gauge.max).toBe(1);
      for (const id of ids) expect(await stores.queues.get(id)).toBeNull();
      expect(errors).toEqual([]);
    });

    it('a continue-as-new successor stays in the queue, in its partition', async () => {
      gauge.now = 0;
      gauge.max = 0;
      const { a, stores } = await pair();
      const roots = ['c1', 'c2', 'c3'];
      const handles = [];
      for (const id of roots)
        handles.push(
          await a.enqueue(chain, { generation: 0 }, { executionId: id, queue: one, partitionKey: 'p' }),
        );
      expect(await Promise.all(handles.map((h) => h.result()))).toEqual(roots.map(() => 'chained'));
      expect(gauge.max).toBe(1);
      for (const id of roots) {
        const successor = await a.loadState(`${id}~1`);
        expect([successor?.status, successor?.queue, successor?.partitionKey]).toEqual([
          'completed',
          'one',
          'p',
        ]);
        expect(await stores.queues.get(`${id}~1`)).toBeNull();
      }
      expect(errors).toEqual([]);
    });
  });
});
