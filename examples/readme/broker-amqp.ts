// examples/readme/broker-amqp.ts: relay the outbox to RabbitMQ, and consume what it carries
import { AmqpTransport } from '@skein/broker-amqp';
import { openSqliteStores } from '@skein/store-sqlite';
import { OutboxPublisher } from '@skein/worker-runtime-local';

const stores = openSqliteStores({ path: './skein.db' }); // every store here has an outbox
const transport = await AmqpTransport.connect({ url: 'amqp://guest:guest@127.0.0.1:5672', prefix: 'skein' });
const publisher = new OutboxPublisher({ stores, transport, batchSize: 200 });
publisher.start(); // relays claimed deliveries in batches, each settled by its own confirm
const consumer = await transport.consume(
  'execution.pending',
  async (message) => {
    console.log(message.topic, message.id, message.attempt);
    return 'ack'; // acked only after this resolves: do the durable work first
  },
  { prefetch: 4 },
);
// …
await consumer.close();
await publisher.stop();
await transport.close();
await stores.close();
