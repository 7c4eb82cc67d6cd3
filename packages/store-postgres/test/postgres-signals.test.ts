/**
 * The signal inbox on PostgreSQL beyond `signalStoreSuite` (run in postgres-stores.test.ts):
 * a new signal wakes a subscriber on another node.
 */
import { type PostgresStores, WAKEUP_SIGNALS } from '@skein/store-postgres';
import { afterEach, describe, expect, it } from 'vitest';
import { openTestStores, whenPostgres } from './support/pg.js';

const opened: PostgresStores[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((stores) => stores.close()));
});

async function open(schema?: string): Promise<PostgresStores> {
  const stores = await openTestStores(schema === undefined ? {} : { schema });
  opened.push(stores);
  return stores;
}

const signal = (signalId: string, executionId: string, sentAt: number, payload = '{}') => ({
  signalId,
  executionId,
  name: 'approve',
  payload,
  sentAt,
});

whenPostgres(() => {
  describe('postgres signal inbox', () => {
    it('a new signal wakes a subscriber on another node with its execution id', async () => {
      const holder = await open();
      const sender = await open(holder.schema);
      const heard = new Promise<string>((resolve) => {
        void holder.wakeups.subscribe(WAKEUP_SIGNALS, resolve);
      });
      // subscribe resolves once LISTEN is in place; wait for it through a second subscription.
      await holder.wakeups.subscribe(WAKEUP_SIGNALS, () => {});
      await sender.signals.send(signal('s-wake', 'order-42', 1));
      expect(await heard).toBe('order-42');
    });
  });
});
