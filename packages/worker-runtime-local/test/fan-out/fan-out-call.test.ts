/**
 * `ctx.fanOut` on a real runtime over SQLite files, worked by FanOutWorkers given the runtime:
 * it resolves with the complete summary and its aggregate; the workflow's log holds a handful
 * of events whatever the number of items (O(1) in the items); `runtime.fanOutResults` pages
 * every result in index order, across shards of `createRuntime({ shards })`; a required item
 * failing for good gives an errored summary without an aggregate (F7).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStores, type SqliteStores } from '@skein/store-sqlite';
import {
  createRuntime,
  defineWorkflow,
  type FanOutSummary,
  InvalidInputError,
} from '@skein/workflow-runtime';
import { HOME_SHARD } from '@skein/workflow-runtime/internal';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FanOutWorker, StoreTransport } from '../../src/index.js';
import { casesOf, score } from './fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'skein-fanout-call-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const evalRun = defineWorkflow({
  name: 'eval-run',
  input: z.object({
    size: z.number().int(),
    failing: z.number().int().optional(),
    shards: z.array(z.string()).optional(),
  }),
  async run(ctx, input) {
    return ctx.fanOut('cases', score, {
      items: casesOf(input.size, (i) => (i === input.failing ? 'fail' : 'ok')),
      chunkSize: 50,
      aggregate: { init: () => 0, add: (sum: number, r: { score: number }) => sum + r.score },
      ...(input.shards === undefined ? {} : { shards: input.shards }),
    });
  },
});

async function run(
  name: string,
  input: z.input<typeof evalRun.input>,
  extra: Record<string, SqliteStores> = {},
) {
  const stores = openSqliteStores({ path: join(dir, `${name}.db`) });
  const runtime = createRuntime({ stores, workflows: [evalRun], shards: extra });
  const transports = [stores, ...Object.values(extra)].map(
    (s) => new StoreTransport({ stores: s, pollIntervalMs: 10 }),
  );
  const worker = new FanOutWorker({ runtime, transport: transports, tasks: [score], parallelism: 8 });
  await worker.start();
  try {
    const handle = await runtime.start(evalRun, input, { executionId: name });
    const outcome = await handle.result().then(
      (summary) => ({ summary: summary as FanOutSummary<number>, error: undefined }),
      (error: unknown) => ({ summary: undefined, error }),
    );
    const results = [];
    if (outcome.summary !== undefined)
      for await (const result of runtime.fanOutResults(`${name}:fanout:cases`, { pageSize: 70 }))
        results.push(result);
    return { ...outcome, log: await runtime.history(name), results };
  } finally {
    await worker.stop();
    for (const t of transports) await t.close();
    await runtime.close();
    await stores.close();
  }
}

describe('ctx.fanOut in a workflow', () => {
  it('resolves with the complete summary; the log stays small whatever the number of items; results page in order', async () => {
    const small = await run('small', { size: 100 });
    const large = await run('large', { size: 3_000 });
    expect(small.summary).toMatchObject({ status: 'complete', total: 100, succeeded: 100, aggregate: 9_900 });
    expect(large.summary).toMatchObject({
      status: 'complete',
      total: 3_000,
      succeeded: 3_000,
      aggregate: 2 * ((3_000 * 2_999) / 2),
    });
    // Creation, the checks and waits, the settlement: no event per item or per chunk.
    expect(large.log.length).toBeLessThan(60);
    expect(large.log.filter((e) => e.type === 'STEP_COMPLETED').length).toBeLessThan(25);
    expect(large.results.map((r) => r.index)).toEqual(Array.from({ length: 3_000 }, (_, i) => i));
    expect(large.results[10]).toEqual({ index: 10, status: 'succeeded', output: { score: 20 }, attempt: 1 });
  }, 120_000);

  it('F7: one required item failing for good gives an errored summary with its reason and no aggregate', async () => {
    const { summary, results } = await run('errored', { size: 200, failing: 123 });
    expect(summary).toMatchObject({ status: 'errored', succeeded: 199, failed: 1 });
    expect(summary?.aggregate).toBeUndefined();
    expect(summary?.errors).toEqual([{ index: 123, error: expect.stringContaining('case 123 is broken') }]);
    expect(results[123]).toMatchObject({ status: 'failed', error: expect.stringContaining('NON_RETRYABLE') });
  }, 60_000);

  it('placement: chunks on the runtime’s own file and on shard "b", one result per item over both', async () => {
    const b = openSqliteStores({ path: join(dir, 'shard-b.db') });
    try {
      const { summary, results } = await run('sharded', { size: 1_000, shards: [HOME_SHARD, 'b'] }, { b });
      expect(summary).toMatchObject({ status: 'complete', succeeded: 1_000, aggregate: 999_000 });
      expect(results.map((r) => r.index)).toEqual(Array.from({ length: 1_000 }, (_, i) => i));
      expect((await b.fanOuts.counts('sharded:fanout:cases')).items.succeeded).toBe(500);
    } finally {
      await b.close();
    }
  }, 60_000);

  it('refuses a shard the runtime does not have, and a shard map that reuses the home name', async () => {
    const { error } = await run('unknown-shard', { size: 10, shards: ['nowhere'] });
    expect(String((error as Error).message)).toContain('"nowhere" is not a shard of the runtime');
    const stores = openSqliteStores({ path: join(dir, 'refused.db') });
    try {
      expect(() => createRuntime({ stores, workflows: [evalRun], shards: { [HOME_SHARD]: stores } })).toThrow(
        InvalidInputError,
      );
    } finally {
      await stores.close();
    }
  }, 30_000);
});
