/**
 * Real workflows end to end on PostgreSQL: start and result, a dense log, and recovery by a
 * second process's runtime (its own pool) that fences the first writer out.
 */
import { openPostgresStores, type PostgresStores } from '@skein/store-postgres';
import { createRuntime, defineWorkflow, type Runtime, StaleFenceError } from '@skein/workflow-runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { dropSchema, freshSchema, PG_URL, whenPostgres } from './support/pg.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** One "process": its own pool on the shared schema, and a runtime over it. */
async function node(schema: string, workflows: Parameters<typeof createRuntime>[0]['workflows']) {
  const stores: PostgresStores = await openPostgresStores({ url: PG_URL, schema, poolSize: 3 });
  const runtime: Runtime = createRuntime({ stores, workflows });
  closers.push(async () => {
    await runtime.close();
    await stores.close();
  });
  return { stores, runtime };
}

function newSchema(): string {
  const schema = freshSchema();
  closers.push(() => dropSchema(schema));
  return schema;
}

const order = defineWorkflow({
  name: 'order',
  input: z.object({ qty: z.number().int().positive() }),
  async run(ctx, { qty }) {
    const held = await ctx.step('reserve', () => `hold-${qty}`);
    const price = await ctx.step('price', () => qty * 5);
    return ctx.step('charge', () => ({ held, charged: price }));
  },
});

whenPostgres(() => {
  describe('workflows on postgres', () => {
    it('start → result; the log is dense from 0, starts once and ends with EXECUTION_COMPLETED', async () => {
      const { runtime } = await node(newSchema(), [order]);
      const handle = await runtime.start(order, { qty: 3 }, { executionId: 'order-1' });
      expect(await handle.result()).toEqual({ held: 'hold-3', charged: 15 });
      const log = await runtime.history('order-1');
      expect(log.map((event) => event.seq)).toEqual(log.map((_, i) => i));
      expect(log[0]!.type).toBe('EXECUTION_STARTED');
      expect(log.at(-1)!.type).toBe('EXECUTION_COMPLETED');
      expect(log.filter((event) => event.type === 'STEP_COMPLETED')).toHaveLength(3);
      expect(await runtime.loadState('order-1')).toMatchObject({
        status: 'completed',
        sequence: log.length - 1,
      });
    });

    it('20 executions at once each complete with their own log', async () => {
      const { runtime, stores } = await node(newSchema(), [order]);
      const states = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          runtime.execute({ executionId: `many-${i}`, workflow: 'order', input: { qty: i + 1 } }),
        ),
      );
      expect(states.map((state) => state.output)).toEqual(
        Array.from({ length: 20 }, (_, i) => ({ held: `hold-${i + 1}`, charged: (i + 1) * 5 })),
      );
      const page = await stores.events.listExecutions({ status: ['completed'], limit: 100 });
      expect(page.items).toHaveLength(20);
    });

    it('a second process recovers an execution: completed steps do not run again and the first writer is fenced out', async () => {
      const schema = newSchema();
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const runs: string[] = [];
      const flaky = defineWorkflow({
        name: 'flaky',
        input: z.null(),
        async run(ctx) {
          await ctx.step('first', () => runs.push('first'));
          await ctx.step('stuck', async () => {
            runs.push('stuck');
            await gate;
          });
          await ctx.step('last', () => runs.push('last'));
          return 'done';
        },
      });
      const a = await node(schema, [flaky]);
      const b = await node(schema, [flaky]);
      const doomed = a.runtime.execute({ executionId: 'flaky-1', workflow: 'flaky', input: null });
      doomed.catch(() => undefined);
      while (!runs.includes('stuck')) await new Promise((resolve) => setTimeout(resolve, 5));

      const takeover = b.runtime.execute({ executionId: 'flaky-1', workflow: 'flaky', input: null });
      // The takeover replays "first" from the log and runs "stuck" again; let both writers finish it.
      while (!(await b.stores.events.read('flaky-1')).some((event) => event.type === 'EXECUTION_RECOVERED')) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      release();
      const state = await takeover;
      expect(state).toMatchObject({ status: 'completed', output: 'done' });
      expect(
        await doomed.then(
          () => 'resolved',
          (error: unknown) => error,
        ),
      ).toBeInstanceOf(StaleFenceError);
      expect(runs.sort()).toEqual(['first', 'last', 'stuck', 'stuck']);
      const log = await b.runtime.history('flaky-1');
      expect(log.map((event) => event.seq)).toEqual(log.map((_, i) => i));
      expect(log.filter((event) => event.type === 'EXECUTION_RECOVERED')).toHaveLength(1);
      expect(log.at(-1)!.type).toBe('EXECUTION_COMPLETED');
      expect(await a.stores.events.read('flaky-1')).toEqual(await b.stores.events.read('flaky-1'));
    });
  });
});
