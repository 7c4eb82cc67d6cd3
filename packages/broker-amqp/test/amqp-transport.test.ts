/** `AmqpTransport` passes the transport suite against the real RabbitMQ, relayed from SQLite. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { transportSuite } from '@skein/conformance';
import { openSqliteStores } from '@skein/store-sqlite';
import { OutboxPublisher } from '@skein/worker-runtime-local';
import { connectTransport, deleteTopology, freshPrefix, TEST_RETRY, whenAmqp } from './support/amqp.js';

const TOPICS = ['suite.a', 'suite.b'];

whenAmqp(() => {
  transportSuite({
    name: 'amqp (relayed from sqlite)',
    retryInitialMs: TEST_RETRY.initialMs,
    open: async () => {
      const prefix = freshPrefix();
      const dir = mkdtempSync(join(tmpdir(), 'skein-amqp-'));
      const stores = openSqliteStores({ path: join(dir, 'skein.db') });
      const transport = await connectTransport(prefix, { topics: TOPICS });
      return {
        outbox: stores.outbox,
        transport,
        relay: () => {
          const publisher = new OutboxPublisher({ stores, transport, pollIntervalMs: 20, batchSize: 50 });
          publisher.start();
          return publisher;
        },
        async close() {
          await transport.close();
          await stores.close();
          rmSync(dir, { recursive: true, force: true });
          await deleteTopology(prefix, TOPICS);
        },
      };
    },
  });
});
