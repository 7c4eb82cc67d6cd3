/** `StoreTransport` passes the transport suite on a real SQLite file and in memory. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { transportSuite } from '@skein/conformance';
import { openSqliteStores } from '@skein/store-sqlite';
import { InvalidInputError, openMemoryStores } from '@skein/workflow-runtime';
import { describe, expect, it } from 'vitest';
import { OutboxMissingError, OutboxPublisher, StoreTransport } from '../src/index.js';

const fast = { pollIntervalMs: 20, retry: { initialMs: 10, maxMs: 50 } };

transportSuite({
  name: 'store (sqlite)',
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
