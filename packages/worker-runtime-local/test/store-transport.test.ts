/** `StoreTransport` passes the transport suite on a real SQLite file and in memory. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { transportSuite } from '@skein/conformance';
import { openSqliteStores } from '@skein/store-sqlite';
import { InvalidInputError, openMemoryStores } from '@skein/workflow-runtime';
import { describe, expect, it } from 'vitest';
import { OutboxMissingError, OutboxPublisher, StoreTransport } from '../src/index.js';

const fast = { pollIntervalMs: 20, retry: { initialMs: 100, maxMs: 1_000 } };

transportSuite({
  name: 'store (sqlite)',
  retryInitialMs: fast.retry.initialMs,
  open: async () => {
    const dir = mkdtempSync(join(tmpdir(), 'skein-store-transport-'));
    const stores = openSqliteStores({ path: join(dir, 'skein.db') });
    const transport = new StoreTransport({ stores, ...fast });
    return {
      outbox: stores.outbox,
      transport,
      async close() {
        await transport.close();
        await stores.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
});

transportSuite({
  name: 'store (memory)',
  retryInitialMs: fast.retry.initialMs,
  open: async () => {
    const stores = openMemoryStores();
    const transport = new StoreTransport({ stores, ...fast });
    return { outbox: stores.outbox, transport, close: () => transport.close() };
  },
});

describe('StoreTransport', () => {
  it('renews its claim while a handler runs past the lease, so no second consumer gets the message', async () => {
    const stores = openMemoryStores();
    const transport = new StoreTransport({ stores, leaseMs: 90, pollIntervalMs: 10 });
    const calls: string[] = [];
    const slow = async (who: string) => {
      calls.push(who);
      await new Promise((resolve) => setTimeout(resolve, 400));
    };
    const a = await transport.consume('t', () => slow('a'));
    const b = await transport.consume('t', () => slow('b'));
    try {
      await stores.outbox.write([{ id: 'm1', topic: 't', key: 'k', payload: '{}', createdAt: Date.now() }]);
      await new Promise((resolve) => setTimeout(resolve, 700));
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
    expect(calls).toHaveLength(1);
    expect((await stores.outbox.get('m1'))?.status).toBe('published');
  });

  it('L7: stores without an outbox, bad options and a publisher over it are refused, naming the field', async () => {
    const { outbox: _, ...bare } = openMemoryStores();
    expect(() => new StoreTransport({ stores: bare as { outbox?: undefined } })).toThrow(OutboxMissingError);
    const stores = openMemoryStores();
    expect(() => new StoreTransport({ stores, leaseMs: 0 })).toThrow(/leaseMs/);
    const transport = new StoreTransport({ stores });
    await expect(transport.consume('t', async () => 'ack', { prefetch: 0 })).rejects.toThrow(/prefetch/);
    expect(() => new OutboxPublisher({ stores, transport })).toThrow(InvalidInputError);
    expect(() => new OutboxPublisher({ stores, transport })).toThrow(/does not relay/);
  });
});

describe('StoreTransport retention', () => {
  const written = (n: number) =>
    Array.from({ length: n }, (_, i) => ({
      id: `m${i}`,
      topic: 't',
      key: `k${i}`,
      payload: '{}',
      createdAt: Date.now(),
    }));

  async function consumeAll(transport: StoreTransport, verdict: (key: string) => 'ack' | 'quarantine') {
    const seen = new Set<string>();
    const consumer = await transport.consume('t', async (m) => {
      seen.add(m.id);
      return verdict(m.key ?? '');
    });
    return { seen, consumer };
  }

  it('retention: acked deliveries are pruned with their ledger rows once past keepPublishedMs; quarantined ones stay (SQLite file)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'skein-store-retention-'));
    const stores = openSqliteStores({ path: join(dir, 'skein.db') });
    const transport = new StoreTransport({
      stores,
      ...fast,
      retention: { keepPublishedMs: 100, intervalMs: 25, batchSize: 2 },
    });
    try {
      await stores.outbox.write(written(5));
      const { seen, consumer } = await consumeAll(transport, (key) => (key === 'k0' ? 'quarantine' : 'ack'));
      const deadline = Date.now() + 10_000;
      while ((seen.size < 5 || (await stores.outbox.list()).length > 1) && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
      await consumer.close();
      const left = await stores.outbox.list();
      expect(left.map((d) => [d.id, d.status])).toEqual([['m0', 'retired']]);
      // The ledger rows went too: the ids are free again.
      await stores.outbox.write(written(3).slice(1));
      expect((await stores.outbox.get('m1'))?.status).toBe('pending');
    } finally {
      await transport.close();
      await stores.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('retention: a delivery acked less than keepPublishedMs ago is kept; retention false keeps every one; prune() says how many went', async () => {
    let now = 1_000_000;
    const stores = openMemoryStores();
    const keep = new StoreTransport({ stores, ...fast, retention: false });
    const transport = new StoreTransport({
      stores,
      ...fast,
      clock: () => now,
      retention: { keepPublishedMs: 5_000 },
    });
    await stores.outbox.write(written(3).map((m) => ({ ...m, createdAt: now })));
    const { seen, consumer } = await consumeAll(transport, () => 'ack');
    while (seen.size < 3) await new Promise((resolve) => setTimeout(resolve, 10));
    await consumer.close();
    while ((await stores.outbox.list({ status: 'published' })).length < 3)
      await new Promise((resolve) => setTimeout(resolve, 10));
    now += 4_999;
    expect(await transport.prune()).toBe(0);
    now += 2;
    expect(await keep.prune()).toBe(0);
    expect(await stores.outbox.list()).toHaveLength(3);
    expect(await transport.prune()).toBe(3);
    expect(await stores.outbox.list()).toEqual([]);
    await transport.close();
    await keep.close();
  });

  it('L7: retention options are checked, naming the field', () => {
    const stores = openMemoryStores();
    expect(() => new StoreTransport({ stores, retention: { keepPublishedMs: -1 } })).toThrow(
      /retention\.keepPublishedMs/,
    );
    expect(() => new StoreTransport({ stores, retention: { intervalMs: 0 } })).toThrow(
      /retention\.intervalMs/,
    );
    expect(() => new StoreTransport({ stores, retry: { initialMs: 10, maxMs: 5 } })).toThrow(/retry\.maxMs/);
  });
});
