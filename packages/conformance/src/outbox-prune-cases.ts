/**
 * Outbox retention: `prune` deletes published deliveries settled before a cutoff, with their
 * ledger rows, and nothing else: a pending delivery (it has not left yet) and a retired one
 * (its diagnostic is what an operator reads) are kept whatever their age.
 */
import { ErrorCodes, type OutboxStore, type Stores } from '@skein/workflow-runtime';
import { newId } from '@skein/workflow-runtime/internal';
import type { OutboxMessage } from '@skein/workflow-runtime/spi';
import { expect, it } from 'vitest';
import { rejectionOf } from './harness.js';

type S = Pick<Stores, 'events' | 'close'> & { outbox: OutboxStore };

function message(key: string): OutboxMessage {
  return { id: newId(), topic: 't', key, payload: '{}', createdAt: 1_000 };
}

/** Write `keys`, claim them all at 1 000, and publish each at the time `settle` gives (or leave it pending). */
async function settled(outbox: OutboxStore, plan: Record<string, number | 'pending' | 'retired'>) {
  const messages = Object.keys(plan).map(message);
  await outbox.write(messages);
  const claimed = await outbox.claim({ now: 1_000, limit: messages.length, leaseMs: 60_000 });
  for (const d of claimed) {
    const at = plan[d.key]!;
    if (at === 'retired') await outbox.retire(d.id, d.claimToken, 'poison', 1_500);
    else if (at !== 'pending') await outbox.markPublished(d.id, d.claimToken, at);
  }
  return new Map(messages.map((m) => [m.key, m.id]));
}

/** Register the retention cases. */
export function outboxPruneCases(run: (body: (stores: S) => Promise<void>) => () => Promise<void>): void {
  it(
    'retention: prune deletes published deliveries settled before the cutoff with their ledger rows, and nothing else',
    run(async ({ outbox }) => {
      const ids = await settled(outbox, {
        old: 2_000,
        older: 1_100,
        fresh: 5_000,
        waiting: 'pending',
        dead: 'retired',
      });
      expect(await outbox.prune({ settledBefore: 5_000 })).toBe(2);
      expect(await outbox.get(ids.get('old')!)).toBeNull();
      expect(await outbox.get(ids.get('older')!)).toBeNull();
      expect((await outbox.list()).map((d) => d.key).sort()).toEqual(['dead', 'fresh', 'waiting']);
      expect(await outbox.prune({ settledBefore: 5_000 })).toBe(0);
      // The pending one is still claimable: pruning took nothing from the delivery queue's work.
      const [again] = await outbox.claim({ now: 70_000, limit: 10, leaseMs: 1_000 });
      expect(again?.key).toBe('waiting');
      // A pruned message's id is free: the ledger row went with its delivery.
      await outbox.write([{ ...message('reused'), id: ids.get('old')! }]);
      expect((await outbox.get(ids.get('old')!))?.status).toBe('pending');
    }),
  );

  it(
    'retention: prune takes at most limit rows, oldest message first',
    run(async ({ outbox }) => {
      const ids = await settled(outbox, { a: 2_000, b: 2_000, c: 2_000, d: 2_000, e: 2_000 });
      const sorted = [...ids.values()].sort();
      expect(await outbox.prune({ settledBefore: 3_000, limit: 2 })).toBe(2);
      expect((await outbox.list()).map((d) => d.id)).toEqual(sorted.slice(2));
      expect(await outbox.prune({ settledBefore: 3_000, limit: 10 })).toBe(3);
      expect(await outbox.list()).toEqual([]);
    }),
  );

  it(
    'retention: prune refuses a cutoff or limit that is not an integer, deleting nothing',
    run(async ({ outbox }) => {
      await settled(outbox, { a: 2_000 });
      const bad = await rejectionOf(outbox.prune({ settledBefore: Number.NaN }));
      expect(bad).toMatchObject({ code: ErrorCodes.InvalidInput });
      expect(String((bad as Error).message)).toContain('settledBefore');
      expect(await rejectionOf(outbox.prune({ settledBefore: 3_000, limit: 0 }))).toMatchObject({
        code: ErrorCodes.InvalidInput,
      });
      expect(await outbox.list()).toHaveLength(1);
    }),
  );
}
