/**
 * The worker process: a runtime on a SQLite file served over HTTP on an ephemeral port of
 * 127.0.0.1. Prints `listening <url>` once it accepts requests; SIGTERM shuts it down.
 * Usage: SKEIN_SECRET=<32+ bytes> node --import tsx examples/remote/worker.ts <db-path>
 */
import { openSqliteStores } from '@skein/store-sqlite';
import { createHttpWorker } from '@skein/worker-runtime-http';
import { createRuntime } from '@skein/workflow-runtime';
import { quote } from './workflow.js';

const [dbPath] = process.argv.slice(2);
const secret = process.env.SKEIN_SECRET;
if (dbPath === undefined || secret === undefined) {
  console.error('usage: SKEIN_SECRET=<secret> worker.ts <db-path>');
  process.exit(2);
}

const stores = openSqliteStores({ path: dbPath });
const runtime = createRuntime({ stores, workflows: [quote] });
const worker = createHttpWorker({ runtime, secret });
const url = await worker.listen(0, '127.0.0.1');
console.log(`listening ${url.href}`);

process.once('SIGTERM', async () => {
  await worker.close();
  await runtime.close();
  await stores.close();
  console.log('worker stopped');
  process.exit(0);
});
