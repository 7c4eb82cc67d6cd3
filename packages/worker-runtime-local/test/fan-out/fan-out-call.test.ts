/**
 * A workflow fans out through `fanOutCall` (what `ctx.fanOut` runs) on a real runtime over a
 * SQLite file, with a FanOutWorker: it resolves with the complete summary and its aggregate;
 * its log holds a handful of events whatever the number of items (O(1) in the items); a
 * required item failing for good gives an errored summary without an aggregate (F7).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStores } from '@skein/store-sqlite';
import {
  createRuntime,
  defineWorkflow,
  type FanOutSummary,
  fanOutCall,
  HOME_SHARD,
} from '@skein/workflow-runtime';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FanOutWorker, StoreTransport } from '../../src/index.js';
import { casesOf, score } from './fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'skein-fanout-call-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function evalRun(total: number, failing?: number) {
  const stores = openSqliteStores({ path: join(dir, `eval-${total}-${failing ?? 'ok'}.db`) });
  const deps = {
    home: stores.fanOuts,
    shards: { [HOME_SHARD]: stores.fanOuts },
    owner: 'node-1',
    clock: Date.now,
  };
  const workflow = defineWorkflow({
    name: 'eval-run',
    input: z.object({ size: z.number().int() }),
    async run(ctx, input) {
      return fanOutCall(ctx, deps, 'cases', score, {
        items: casesOf(input.size, (i) => (i === failing ? 'fail' : 'ok')),
        chunkSize: 50,
        aggregate: { init: () => 0, add: (sum: number, r: { score: number }) => sum + r.score },
      });
    },
  });
  const runtime = createRuntime({ stores, workflows: [workflow] });
  const transport = new StoreTransport({ stores, pollIntervalMs: 10 });
  const worker = new FanOutWorker({
    home: stores.fanOuts,
    shards: deps.shards,
    transport,
    tasks: [score],
    parallelism: 8,
  });
  await worker.start();
  try {
    const handle = await runtime.start(workflow, { size: total }, { executionId: `eval-${total}` });
    const summary = (await handle.result()) as FanOutSummary<number>;
    const log = await runtime.history(`eval-${total}`);
    return { summary, log, row: await stores.fanOuts.get(`eval-${total}:fanout:cases`) };
  } finally {
    await worker.stop();
    await transport.close();
    await runtime.close();
    await stores.close();
  }
}

describe('fanOutCall in a workflow', () => {
  it('resolves with the complete summary; the log stays small whatever the number of items', async () => {
    const small = await evalRun(100);
    const large = await evalRun(3_000);
    expect(small.summary).toMatchObject({ status: 'complete', total: 100, succeeded: 100, aggregate: 9_900 });
    expect(large.summary).toMatchObject({
      status: 'complete',
      total: 3_000,
      succeeded: 3_000,
      aggregate: 2 * ((3_000 * 2_999) / 2),
    });
    expect(large.row).toMatchObject({ status: 'settled' });
    // Creation, the checks and waits, the settlement: no event per item or per chunk.
    expect(large.log.length).toBeLessThan(60);
    expect(large.log.filter((e) => e.type === 'STEP_COMPLETED').length).toBeLessThan(25);
  }, 120_000);

  it('F7: one required item failing for good gives an errored summary with its reason and no aggregate', async () => {
    const { summary } = await evalRun(200, 123);
    expect(summary).toMatchObject({ status: 'errored', succeeded: 199, failed: 1 });
    expect(summary.aggregate).toBeUndefined();
    expect(summary.errors).toEqual([{ index: 123, error: expect.stringContaining('case 123 is broken') }]);
  }, 60_000);
});
