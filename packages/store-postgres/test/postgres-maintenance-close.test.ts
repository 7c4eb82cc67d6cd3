/**
 * Closing PostgreSQL stores stops the in-process maintenance of the runtimes on them first: no
 * pass meets the ended pool, and a pass in flight ends quietly with the runs it started.
 */
import { createRuntime, defineWorkflow } from '@skein/workflow-runtime';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { openTestStores, whenPostgres } from './support/pg.js';

const job = defineWorkflow({
  name: 'job',
  input: z.string(),
  async run(ctx, name) {
    return ctx.step('work', () => name);
  },
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

whenPostgres(() => {
  describe('closing PostgreSQL stores stops the maintenance first', () => {
    test('a pass in flight at the close ends quietly; no pass runs after it, nothing is reported', async () => {
      const stores = await openTestStores();
      const errors: unknown[] = [];
      const enqueuer = createRuntime({ stores, workflows: [job], maintenance: false });
      for (let i = 0; i < 10; i++) await enqueuer.enqueue(job, `job-${i}`, { executionId: `job-${i}` });
      const runtime = createRuntime({
        stores,
        workflows: [job],
        lease: { ttlMs: 1_000 },
        maintenance: { intervalMs: 10 },
        onError: (error) => errors.push(error),
      });
      try {
        const pass = runtime.maintain();
        await new Promise((resolve) => setImmediate(resolve));
        await stores.close();
        await expect(pass).resolves.toBeDefined();
        await pause(100); // ten intervals
        expect(errors).toEqual([]);
        expect(await runtime.maintain()).toBeNull();
      } finally {
        await runtime.close();
      }
    });
  });
});
