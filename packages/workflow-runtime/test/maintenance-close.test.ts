/**
 * Closing the stores stops the in-process maintenance of every runtime on them first: no pass
 * runs after the close, and a pass in flight at the close ends quietly (docs/supervision.md).
 * A real SQLite file, whose closed connection fails every later call.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStores, type SqliteStores } from '@skein/store-sqlite';
import { createRuntime, defineWorkflow, type Runtime } from '@skein/workflow-runtime';
import { afterEach, describe, expect, test } from 'vitest';
import { z } from 'zod';

const job = defineWorkflow({
  name: 'job',
  input: z.string(),
  async run(ctx, name) {
    return ctx.step('work', () => name);
  },
});

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A runtime whose maintenance passes every 10 ms over a fresh SQLite file; errors collected.
 * `seed` writes to the stores before the runtime exists, so no pass of its own has seen them.
 */
async function arrange(seed?: (stores: SqliteStores) => Promise<void>) {
  const dir = mkdtempSync(join(tmpdir(), 'skein-maintenance-close-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'skein.db');
  const stores = openSqliteStores({ path, durability: 'normal' });
  await seed?.(stores);
  const errors: [unknown, string][] = [];
  const runtime: Runtime = createRuntime({
    stores,
    workflows: [job],
    lease: { ttlMs: 1_000 },
    maintenance: { intervalMs: 10 },
    onError: (error, context) => errors.push([error, context]),
  });
  cleanups.push(() => runtime.close());
  return { path, stores, runtime, errors };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('closing the stores stops the maintenance first', () => {
  test('after the stores close no pass runs, and nothing is reported', async () => {
    const { stores, runtime, errors } = await arrange();
    expect(await runtime.maintain()).toEqual({ claimed: [], recovered: [], woken: [] });
    await stores.close();
    await pause(100); // ten intervals
    expect(errors).toEqual([]);
    expect(await runtime.maintain()).toBeNull();
  });

  test('a pass in flight at the close ends quietly, with the runs it started', async () => {
    // Enqueued before the maintaining runtime exists: a pass of its timer would claim them first.
    const { path, stores, runtime, errors } = await arrange(async (stores) => {
      const enqueuer = createRuntime({ stores, workflows: [job], maintenance: false });
      for (let i = 0; i < 20; i++) await enqueuer.enqueue(job, `job-${i}`, { executionId: `job-${i}` });
    });
    const pass = runtime.maintain(); // runs before the timer's first pass
    await new Promise((resolve) => setImmediate(resolve)); // the pass is under way
    const reopened = openSqliteStores({ path, durability: 'normal' });
    cleanups.push(() => reopened.close());
    await stores.close();
    const done = await pass;
    expect(done?.claimed.length).toBeGreaterThan(0);
    await pause(100);
    expect(errors).toEqual([]);
    // What the pass claimed ran to its end before the file closed.
    for (const id of done?.claimed ?? [])
      expect((await reopened.events.getExecution(id))?.status).toBe('completed');
  });
});
