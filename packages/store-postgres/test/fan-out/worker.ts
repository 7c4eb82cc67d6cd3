/**
 * A worker process of the PostgreSQL fan-out crash test: a FanOutWorker on one schema over
 * RabbitMQ whose task prints `started <index>` and takes 40 ms an item, so the test can kill
 * it mid-chunk. Args: url, schema, broker url, prefix, worker id.
 */
import { AmqpTransport } from '@skein/broker-amqp';
import { openPostgresStores } from '@skein/store-postgres';
import { FanOutWorker } from '@skein/worker-runtime-local';
import { defineTask } from '@skein/workflow-runtime';
import { z } from 'zod';

const [url, schema, amqpUrl, prefix, workerId] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
];
const slow = defineTask({
  name: 'score',
  input: z.object({ i: z.number().int() }),
  async run(input) {
    console.log(`started ${input.i}`);
    await new Promise((resolve) => setTimeout(resolve, 40));
    return { score: input.i };
  },
});
const stores = await openPostgresStores({ url, schema, poolSize: 4 });
const transport = await AmqpTransport.connect({
  url: amqpUrl,
  prefix,
  connectionName: `skeintest:${prefix}`,
  onError: () => {},
});
const worker = new FanOutWorker({
  stores,
  transport,
  tasks: [slow],
  workerId,
  leaseMs: 600,
  parallelism: 2,
  batchSize: 2,
  onError: () => {},
});
await worker.start();
console.log('ready');
