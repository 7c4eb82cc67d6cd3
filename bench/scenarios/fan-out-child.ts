/**
 * A worker process of the fan-out bench: a FanOutWorker running a trivial task, over SQLite and
 * a StoreTransport (`sqlite <path>`) or PostgreSQL and RabbitMQ (`postgres <schema> <prefix>`),
 * until SIGTERM; it prints `ready` once consuming.
 */
import { AmqpTransport } from '@skein/broker-amqp';
import { openPostgresStores } from '@skein/store-postgres';
import { openSqliteStores } from '@skein/store-sqlite';
import type { Transport } from '@skein/worker-runtime';
import { FanOutWorker, StoreTransport } from '@skein/worker-runtime-local';
import type { Stores } from '@skein/workflow-runtime';
import { trivial } from './fan-out-task.js';

const [mode, where, prefix] = process.argv.slice(2) as [string, string, string | undefined];
const PG_URL = process.env.SKEIN_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const AMQP_URL = process.env.SKEIN_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

let stores: Stores & { fanOuts: NonNullable<Stores['fanOuts']> };
let transport: Transport;
if (mode === 'sqlite') {
  stores = openSqliteStores({ path: where, durability: 'normal' });
  transport = new StoreTransport({ stores, pollIntervalMs: 5 });
} else {
  stores = await openPostgresStores({ url: PG_URL, schema: where, poolSize: 8 });
  transport = await AmqpTransport.connect({ url: AMQP_URL, prefix: prefix!, onError: () => {} });
}
const worker = new FanOutWorker({
  home: stores.fanOuts,
  shards: { main: stores.fanOuts },
  transport,
  tasks: [trivial],
  maxInFlightChunks: 8,
  parallelism: 16,
  batchSize: 100,
  onError: () => {},
});
await worker.start();
console.log('ready');
process.on('SIGTERM', () => {
  void (async () => {
    await worker.stop();
    await transport.close();
    await stores.close();
    process.exit(0);
  })();
});
