/**
 * The signal inbox on PostgreSQL: arrival order, a resend is a no-op, complete deletes, and a
 * new signal wakes a subscriber on another node. (Until `@skein/conformance` has a signal
 * suite, this file is the contract.)
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
    it('pending lists one execution’s signals first sent first; a resent id leaves the first send standing', async () => {
      const { signals } = await open();
      await signals.send(signal('s-b', 'e', 200, 'true'));
      await signals.send(signal('s-a', 'e', 100, 'false'));
      await signals.send(signal('s-other', 'other', 50));
      await signals.send(signal('s-b', 'e', 300, 'changed'));
      expect(await signals.pending('e')).toEqual([
        signal('s-b', 'e', 200, 'true'),
        signal('s-a', 'e', 100, 'false'),
      ]);
      expect(await signals.pending('nobody')).toEqual([]);
    });

    it('complete deletes one signal; unknown ids are ignored', async () => {
      const { signals } = await open();
      await signals.send(signal('s-1', 'e', 1));
      await signals.send(signal('s-2', 'e', 2));
      await signals.complete('s-1');
      await signals.complete('never-sent');
      expect((await signals.pending('e')).map((s) => s.signalId)).toEqual(['s-2']);
    });

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
