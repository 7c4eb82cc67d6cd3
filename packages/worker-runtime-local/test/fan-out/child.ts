/**
 * A child process of the fan-out crash tests, on one SQLite file:
 * - `worker <db> <workerId> <leaseMs> [freezeAt releaseFile]`: a FanOutWorker over StoreTransport;
 *   its task prints `started <index>` as each item starts and runs slowly, so a test can kill it
 *   mid-chunk. With `freezeAt`, the task of that item prints `frozen <index>` and blocks the whole
 *   process synchronously until `releaseFile` exists: no timer runs, no lease is renewed, and no
 *   write transaction is open (every store call is synchronous), so the worker goes stale without
 *   holding the file's write lock. Once released it prints `lost` when it has found its chunk gone.
 *   On SIGTERM it stops and prints its stats as JSON.
 * - `creator <db> <fanOutId> <total> <hangAtChunk>`: createFanOut whose source prints `page <k>`
 *   and never answers for chunk `hangAtChunk`, so a test can kill it between two seeds; it seeds
 *   two chunks per transaction.
 */
import { existsSync } from 'node:fs';
import { openSqliteStores } from '@skein/store-sqlite';
import { defineTask } from '@skein/workflow-runtime';
import { createFanOut } from '@skein/workflow-runtime/internal';
import { z } from 'zod';
import { FanOutWorker, StoreTransport } from '../../src/index.js';
import { casesOf, planOf, score } from './fixtures.js';

const [mode, dbPath, ...rest] = process.argv.slice(2) as [string, string, ...string[]];
const stores = openSqliteStores({ path: dbPath });

/** Block this process (event loop and all) until `file` exists. */
function freezeUntil(file: string): void {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  while (!existsSync(file)) Atomics.wait(cell, 0, 0, 20);
}

if (mode === 'worker') {
  const [workerId, leaseMs, freezeAt, releaseFile] = rest as [string, string, string?, string?];
  const slow = defineTask({
    ...score,
    input: z.object({ i: z.number().int(), kind: z.string() }),
    async run(input) {
      console.log(`started ${input.i}`);
      if (releaseFile !== undefined && input.i === Number(freezeAt)) {
        console.log(`frozen ${input.i}`);
        freezeUntil(releaseFile);
        const watch = setInterval(() => {
          if (worker.stats().lost === 0) return;
          clearInterval(watch);
          console.log('lost');
        }, 10);
      }
      await new Promise((resolve) => setTimeout(resolve, 40));
      return { score: input.i * 2 };
    },
  });
  const transport = new StoreTransport({ stores, pollIntervalMs: 10, leaseMs: 60_000 });
  const worker = new FanOutWorker({
    home: stores.fanOuts,
    shards: { main: stores.fanOuts },
    transport,
    tasks: [slow],
    workerId,
    leaseMs: Number(leaseMs),
    parallelism: 2,
    batchSize: 2,
    onError: () => {},
  });
  await worker.start();
  process.on('SIGTERM', () => {
    void (async () => {
      await worker.stop();
      await transport.close();
      console.log(`stats ${JSON.stringify(worker.stats())}`);
      await stores.close();
      process.exit(0);
    })();
  });
} else if (mode === 'creator') {
  const [fanOutId, total, hangAt] = rest as [string, string, string];
  const plan = planOf(fanOutId, 10);
  const cases = casesOf(Number(total));
  await createFanOut({
    home: stores.fanOuts,
    shards: { main: stores.fanOuts },
    plan,
    task: score,
    owner: 'child-creator',
    leaseMs: 1_000,
    seedBatchItems: 20, // two chunks per seed transaction
    items: async (from, limit) => {
      const k = from / plan.chunkSize;
      console.log(`page ${k}`);
      if (k === Number(hangAt)) await new Promise(() => {});
      return cases(from, limit);
    },
  });
  console.log('dispatched');
  await stores.close();
}
