/**
 * Broker-wide: the RabbitMQ app stopped and started mid-load (`rabbitmqctl stop_app` /
 * `start_app`). Runs alone, in the vitest project `alone` after every other test, since it
 * cuts every connection on the broker. Every committed message delivered at least once, none
 * marked published without a confirm, nothing committed lost, nothing uncommitted published.
 */
import { describe, expect, it } from 'vitest';
import { rabbitmqctl, whenAmqp } from './support/amqp.js';
import { openRelay } from './support/relay.js';

whenAmqp(() => {
  describe('amqp broker restart', () => {
    it('O3: the broker app stopped and started mid-load: nothing lost, nothing published unconfirmed', async () => {
      const relay = await openRelay();
      let restarted = false;
      try {
        relay.publisher({ batchSize: 50 });
        await relay.consume();
        const load = (async () => {
          for (let i = 0; i < 10; i++) {
            await relay.commit(20);
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        })();
        await new Promise((resolve) => setTimeout(resolve, 200));
        await rabbitmqctl('stop_app');
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        await rabbitmqctl('start_app');
        restarted = true;
        await rabbitmqctl('await_startup');
        await load;
        await relay.settled(60_000);
        await relay.check();
        expect(relay.committed.size).toBe(200);
      } finally {
        if (!restarted) await rabbitmqctl('start_app').catch(() => undefined);
        await relay.close();
      }
    }, 120_000);
  });
});
