/** `AmqpTransport.deleteTopology` removes every exchange and queue a prefix declared, against the real RabbitMQ. */
import { AmqpTransport, retryCeilings, topologyOf } from '@skein/broker-amqp';
import { InvalidInputError } from '@skein/workflow-runtime';
import { Connection } from 'rabbitmq-client';
import { describe, expect, it } from 'vitest';
import { AMQP_URL, connectTransport, freshPrefix, TEST_RETRY, whenAmqp } from './support/amqp.js';

/** Which of `queues` and `exchanges` the broker has (a passive declare each, on a channel of its own). */
async function present(queues: string[], exchanges: string[]): Promise<string[]> {
  const connection = new Connection({ url: AMQP_URL });
  connection.on('error', () => undefined);
  const found: string[] = [];
  try {
    for (const queue of queues) {
      const channel = await connection.acquire();
      if (
        await channel.queueDeclare({ queue, passive: true }).then(
          () => true,
          () => false,
        )
      )
        found.push(queue);
      await channel.close().catch(() => undefined);
    }
    for (const exchange of exchanges) {
      const channel = await connection.acquire();
      if (
        await channel.exchangeDeclare({ exchange, passive: true }).then(
          () => true,
          () => false,
        )
      )
        found.push(exchange);
      await channel.close().catch(() => undefined);
    }
  } finally {
    await connection.close();
  }
  return found;
}

whenAmqp(() => {
  describe('AmqpTransport.deleteTopology', () => {
    it('deletes the queues of the declared and the consumed topics, the quarantine, the retry queues and the exchanges', async () => {
      const prefix = freshPrefix();
      const t = topologyOf(prefix);
      const transport = await connectTransport(prefix, { topics: ['declared'] });
      const subscription = await transport.consume('consumed', async () => 'ack');
      await subscription.close();
      await transport.close();
      const queues = [
        t.queueOf('declared'),
        t.queueOf('consumed'),
        t.quarantineQueue,
        ...retryCeilings(TEST_RETRY).map((ms) => t.retryQueueOf(ms)),
      ];
      const exchanges = [t.exchange, t.quarantineExchange, t.retryExchange];
      expect(await present(queues, exchanges)).toEqual([...queues, ...exchanges]);

      const options = { url: AMQP_URL, prefix, topics: ['declared', 'consumed'], retry: TEST_RETRY };
      await AmqpTransport.deleteTopology(options);
      expect(await present(queues, exchanges)).toEqual([]);
      // What is gone already is not an error.
      await AmqpTransport.deleteTopology(options);
    });

    it('refuses bad options before it connects', async () => {
      const error = await AmqpTransport.deleteTopology({
        prefix: 'has space',
        url: 'amqp://127.0.0.1:1',
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidInputError);
      expect(String((error as Error).message)).toContain('prefix');
    });
  });
});
