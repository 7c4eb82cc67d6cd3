/**
 * O2/O3 against the real RabbitMQ, one prefix and connection name per test: every
 * connection of the test closed under load, an unroutable publish, a publisher SIGKILLed
 * between publish and settle, a consumer SIGKILLed before its ack. In every case: every
 * committed message delivered at least once, none marked published without a confirm,
 * nothing committed lost, nothing uncommitted published (`support/relay.ts`).
 */
import { OutboxPublisher } from '@skein/worker-runtime-local';
import { newId } from '@skein/workflow-runtime/internal';
import { describe, expect, it } from 'vitest';
import { exited, spawnScript } from '../../worker-runtime-local/test/support/spawn.js';
import {
  closeConnectionsNamed,
  connectTransport,
  deleteTopology,
  freshPrefix,
  whenAmqp,
} from './support/amqp.js';
import { openRelay, TOPIC } from './support/relay.js';

/** Resolves with the first line of `child`'s stdout that starts with `prefix`. */
function lineOf(child: ReturnType<typeof spawnScript>, prefix: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const line = buffer.split('\n').find((l) => l.startsWith(prefix));
      if (line !== undefined) resolve(line);
    });
    child.once('exit', (code) => reject(new Error(`child exited (${code}) before printing "${prefix}"`)));
  });
}

whenAmqp(() => {
  describe('amqp failures', () => {
    it('O3: every connection of the test closed twice under load: nothing lost, nothing published unconfirmed', async () => {
      const relay = await openRelay();
      try {
        relay.publisher({ batchSize: 50 });
        await relay.consume();
        const load = (async () => {
          for (let i = 0; i < 10; i++) {
            await relay.commit(30);
            await new Promise((resolve) => setTimeout(resolve, 40));
          }
        })();
        await new Promise((resolve) => setTimeout(resolve, 150));
        expect(await closeConnectionsNamed(`skeintest:${relay.prefix}`)).toBeGreaterThan(0);
        await new Promise((resolve) => setTimeout(resolve, 300));
        await closeConnectionsNamed(`skeintest:${relay.prefix}`);
        await load;
        await relay.settled(30_000);
        await relay.check();
        expect(relay.committed.size).toBe(300);
      } finally {
        await relay.close();
      }
    }, 60_000);

    it('O2: an unroutable publish is returned and stays pending; once a queue takes its topic it is delivered', async () => {
      const relay = await openRelay();
      const topic = 'nobody.listens';
      const id = newId();
      try {
        await relay.stores.outbox.write([{ id, topic, key: 'k', payload: '{}', createdAt: Date.now() }]);
        const publisher = new OutboxPublisher({
          stores: relay.stores,
          transport: relay.transport,
          retry: { initialMs: 1, maxMs: 1 },
        });
        const report = await publisher.relayOnce();
        expect(report).toMatchObject({ claimed: 1, published: 0, rescheduled: 1 });
        const pending = await relay.stores.outbox.get(id);
        expect(pending).toMatchObject({ status: 'pending', attempts: 1 });
        expect(pending?.lastError).toContain('returned');
        expect(pending?.lastError).toContain(topic);
        // A consumer declares the topic's queue; the next relay is confirmed.
        const got: string[] = [];
        const consumer = await relay.transport.consume(topic, async (m) => void got.push(m.id));
        await new Promise((resolve) => setTimeout(resolve, 5));
        expect((await publisher.relayOnce()).published).toBe(1);
        const deadline = Date.now() + 10_000;
        while (got.length === 0 && Date.now() < deadline)
          await new Promise((resolve) => setTimeout(resolve, 20));
        await consumer.close();
        expect(got).toEqual([id]);
        expect((await relay.stores.outbox.get(id))?.status).toBe('published');
      } finally {
        await relay.close();
        await deleteTopology(relay.prefix, [topic]);
      }
    }, 30_000);

    it('O3: a publisher SIGKILLed between publish and settle: its claims lapse and every message is delivered', async () => {
      const relay = await openRelay();
      try {
        await relay.commit(40);
        const child = spawnScript(new URL('./support/publish-then-hang.ts', import.meta.url), [
          relay.path,
          relay.prefix,
          TOPIC,
          '1500',
        ]);
        const line = await lineOf(child, 'published');
        child.kill('SIGKILL');
        expect((await exited(child)).signal).toBe('SIGKILL');
        expect(line).toBe('published 40 confirmed 40');
        // Confirmed but never settled: all 40 are still pending, claimed by the dead publisher.
        expect(await relay.stores.outbox.list({ status: 'pending' })).toHaveLength(40);
        await relay.consume();
        relay.publisher({ leaseMs: 1500 });
        await relay.settled(30_000);
        await relay.check();
        // Delivered twice: once from the dead publisher, once after its claims lapsed.
        const deadline = Date.now() + 20_000;
        while ([...relay.seen.values()].some((n) => n < 2) && Date.now() < deadline)
          await new Promise((resolve) => setTimeout(resolve, 50));
        expect([...relay.seen.values()].every((n) => n >= 2)).toBe(true);
      } finally {
        await relay.close();
      }
    }, 60_000);

    it('O3: a consumer SIGKILLed before its ack: its messages are delivered again to the next consumer', async () => {
      const relay = await openRelay();
      try {
        await relay.commit(20);
        relay.publisher();
        const child = spawnScript(new URL('./support/consume-no-ack.ts', import.meta.url), [
          relay.prefix,
          TOPIC,
          '5',
        ]);
        await lineOf(child, 'got');
        await new Promise((resolve) => setTimeout(resolve, 300));
        child.kill('SIGKILL');
        await exited(child);
        await relay.consume();
        await relay.settled(30_000);
        await relay.check();
      } finally {
        await relay.close();
      }
    }, 60_000);

    it('O2: a publish on a connection closed mid-batch is retried once on a fresh channel, else reported failed and left pending', async () => {
      const prefix = freshPrefix();
      const transport = await connectTransport(prefix, { topics: [TOPIC] });
      try {
        const messages = Array.from({ length: 200 }, (_, i) => ({
          id: newId(),
          topic: TOPIC,
          key: `${i}`,
          payload: '{}',
          attempt: 1,
        }));
        const publishing = transport.publish(messages);
        await closeConnectionsNamed(`skeintest:${prefix}`);
        const outcomes = await publishing;
        // Each outcome is the broker's answer: confirmed (first try or the retry) or failed, never lost.
        for (const outcome of outcomes) expect(['confirmed', 'failed']).toContain(outcome.status);
        expect(outcomes.filter((o) => o.status === 'confirmed').length).toBeGreaterThan(0);
      } finally {
        await transport.close();
        await deleteTopology(prefix, [TOPIC]);
      }
    }, 30_000);
  });
});
