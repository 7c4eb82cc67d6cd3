/** Child process: claims the outbox's deliveries, publishes them with confirms, and hangs before settling. */
import { openSqliteStores } from '@skein/store-sqlite';
import { messageOf } from '@skein/worker-runtime';
import { connectTransport } from './amqp.js';

const [dbPath, prefix, topic, leaseMs] = process.argv.slice(2) as [string, string, string, string];
const stores = openSqliteStores({ path: dbPath });
const transport = await connectTransport(prefix, {
  topics: [topic],
  connectionName: `skeintest:${prefix}:publisher`,
});
const claimed = await stores.outbox.claim({ limit: 1_000, leaseMs: Number(leaseMs) });
const outcomes = await transport.publish(claimed.map(messageOf));
const confirmed = outcomes.filter((outcome) => outcome.status === 'confirmed').length;
console.log(`published ${claimed.length} confirmed ${confirmed}`);
await new Promise(() => undefined);
