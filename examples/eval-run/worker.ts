/** A worker process of the eval run: a FanOutWorker on the SQLite file, until SIGTERM. */
import { openSqliteStores } from '@skein/store-sqlite';
import { FanOutWorker, StoreTransport } from '@skein/worker-runtime-local';
import { score } from './workflow.js';

const [path, workerId] = process.argv.slice(2) as [string, string];
const stores = openSqliteStores({ path });
const transport = new StoreTransport({ stores, pollIntervalMs: 10 });
const worker = new FanOutWorker({
  stores,
  transport,
  tasks: [score],
  workerId,
  parallelism: 8,
});
await worker.start();
console.log('ready');
process.on('SIGTERM', () => {
  void (async () => {
    await worker.stop();
    await transport.close();
    console.log(`stats ${JSON.stringify(worker.stats())}`);
    await stores.close();
    process.exit(0);
  })();
});
