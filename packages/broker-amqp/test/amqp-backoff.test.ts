/**
 * Retries back off while the broker refuses, against the real RabbitMQ: a vhost of the test's
 * own whose permissions are revoked (and the test's connections closed, so they must log in
 * again), then granted back. While refused, each delivery is retried after a growing,
 * jittered backoff, not at once; once granted, every committed message is delivered.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AmqpTransport } from '@skein/broker-amqp';
import { openSqliteStores } from '@skein/store-sqlite';
import { OutboxPublisher } from '@skein/worker-runtime-local';
import { newId } from '@skein/workflow-runtime/internal';
import type { OutboxMessage } from '@skein/workflow-runtime/spi';
import { describe, expect, it } from 'vitest';
import { AMQP_URL, closeConnectionsNamed, rabbitmqctl, TEST_RETRY, whenAmqp } from './support/amqp.js';

const TOPIC = 'backoff';
/** The publisher's backoff here: ceilings 400, 800, 1 600 ms… (a retry after 200–400, 400–800, …). */
const PUBLISH_RETRY = { initialMs: 400, maxMs: 3_200 };

function messages(n: number): OutboxMessage[] {
  return Array.from({ length: n }, (_, i) => ({
    id: newId(),
    topic: TOPIC,
    key: `k${i}`,
    payload: '{}',
    createdAt: Date.now(),
  }));
}

async function until(done: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

whenAmqp(() => {
  describe('amqp backoff', () => {
    it('while the broker refuses the vhost, a delivery is retried after a growing backoff, not at once; granted back, all are delivered', async () => {
      const vhost = `skeintest.${process.pid}.${Math.random().toString(36).slice(2, 8)}`;
      const name = `skeintest:${vhost}`;
      const dir = mkdtempSync(join(tmpdir(), 'skein-amqp-backoff-'));
      const stores = openSqliteStores({ path: join(dir, 'skein.db') });
      await rabbitmqctl('add_vhost', vhost);
      let transport: AmqpTransport | undefined;
      let publisher: OutboxPublisher | undefined;
      try {
        await rabbitmqctl('set_permissions', '-p', vhost, 'guest', '.*', '.*', '.*');
        transport = await AmqpTransport.connect({
          url: `${AMQP_URL}/${encodeURIComponent(vhost)}`,
          prefix: 'skeintest',
          topics: [TOPIC],
          connectionName: name,
          connectTimeoutMs: 150,
          reconnect: { stepMs: 50, maxMs: 200 },
          retry: TEST_RETRY,
          onError: () => undefined,
        });
        const seen = new Set<string>();
        await transport.consume(TOPIC, async (m) => void seen.add(m.id));
        publisher = new OutboxPublisher({
          stores,
          transport,
          pollIntervalMs: 20,
          retry: PUBLISH_RETRY,
          onError: () => undefined,
        });
        publisher.start();
        const before = messages(20);
        await stores.outbox.write(before);
        await until(async () => before.every((m) => seen.has(m.id)), 15_000, 'the first 20 messages');

        await rabbitmqctl('clear_permissions', '-p', vhost, 'guest');
        expect(await closeConnectionsNamed(name)).toBeGreaterThan(0);
        const during = messages(20);
        await stores.outbox.write(during);
        await new Promise((resolve) => setTimeout(resolve, 2_500));
        const held = await Promise.all(during.map((m) => stores.outbox.get(m.id)));
        // Every attempt failed (nothing published without a confirm) …
        for (const d of held) expect(d).toMatchObject({ status: 'pending' });
        // … and each came back after a growing backoff: a failed publish takes about 350 ms
        // here (two tries of the 150 ms acquire timeout), so retrying at once makes 7 attempts
        // in 2.5 s; with the backoff the fourth attempt comes after about 3 s.
        const attempts = held.map((d) => d!.attempts);
        expect(Math.max(...attempts)).toBeLessThanOrEqual(4);
        expect(Math.min(...attempts)).toBeGreaterThanOrEqual(2);
        expect(held.every((d) => (d!.lastError ?? '').startsWith('failed'))).toBe(true);

        await rabbitmqctl('set_permissions', '-p', vhost, 'guest', '.*', '.*', '.*');
        await until(
          async () =>
            during.every((m) => seen.has(m.id)) &&
            (await stores.outbox.list({ status: 'pending', limit: 1 })).length === 0,
          30_000,
          'the 20 messages written while refused',
        );
      } finally {
        await publisher?.stop();
        await transport?.close().catch(() => undefined);
        await stores.close();
        rmSync(dir, { recursive: true, force: true });
        await rabbitmqctl('delete_vhost', vhost);
      }
    }, 90_000);
  });
});
