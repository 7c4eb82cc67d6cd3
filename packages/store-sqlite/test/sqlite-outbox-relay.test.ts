/**
 * The outbox on the relay's hot path (adr/0072): a claim and a listing by status walk their
 * indexes (never every delivery, never a sort), and the claims and settlements that commit
 * without an fsync leave the file's durability as it was for everything else (O1: an append
 * after a claim still commits with `synchronous = FULL`).
 */
import { newId } from '@skein/workflow-runtime/internal';
import { afterEach, describe, expect, it } from 'vitest';
import { openConnection } from '../src/connection.js';
import { loadMigrations, migrate } from '../src/migrate.js';
import { selectAvailable, selectDeliveriesIn } from '../src/outbox-queries.js';
import { SqliteOutboxStore } from '../src/sqlite-outbox-store.js';
import { tempDatabase } from './temp-stores.js';

const FULL = 2;

describe('sqlite outbox on the relay path', () => {
  const files: ReturnType<typeof tempDatabase>[] = [];
  const fresh = () => {
    const file = tempDatabase();
    files.push(file);
    const db = openConnection({ path: file.path, durability: 'full' });
    migrate(db, loadMigrations());
    return db;
  };
  afterEach(() => {
    for (const file of files.splice(0)) file.remove();
  });

  it('a claim walks the available index and a listing by status the status index: no full scan, no temp sort', () => {
    const db = fresh();
    try {
      const plans = [
        [selectAvailable(db), 'skein_outbox_deliveries_available', { now: 1, limit: 200, topics: null }],
        [selectAvailable(db), 'skein_outbox_deliveries_available', { now: 1, limit: 200, topics: '["t"]' }],
        [
          selectDeliveriesIn(db),
          'skein_outbox_deliveries_status',
          { status: 'pending', after: '', limit: 1 },
        ],
      ] as const;
      for (const [statement, index, params] of plans) {
        const plan = db
          .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${statement.source}`)
          .all(params)
          .map((row) => row.detail)
          .join('; ');
        expect(plan, statement.source).toContain(`USING INDEX ${index}`);
        expect(plan, statement.source).not.toMatch(/TEMP B-TREE|SCAN skein_/);
      }
    } finally {
      db.close();
    }
  });

  it("O1: claims and settlements skip the fsync, and leave the file's synchronous level as it was", async () => {
    const db = fresh();
    try {
      expect(db.pragma('synchronous', { simple: true })).toBe(FULL);
      const outbox = new SqliteOutboxStore(db);
      const messages = Array.from({ length: 4 }, (_, i) => ({
        id: newId(),
        topic: 't',
        key: `k${i}`,
        payload: '{}',
        createdAt: 1_000,
      }));
      await outbox.write(messages);
      const [a, b, c, d] = await outbox.claim({ now: 1_000, limit: 4, leaseMs: 1_000 });
      expect(db.pragma('synchronous', { simple: true })).toBe(FULL);
      expect(await outbox.markPublishedAll([{ id: a!.id, token: a!.claimToken }], 1_100)).toEqual([true]);
      expect(await outbox.markPublished(b!.id, b!.claimToken, 1_100)).toBe(true);
      expect(await outbox.renew(c!.id, c!.claimToken, 1_100, 1_000)).toBe(true);
      const later = { availableAt: 5_000, error: 'nacked', now: 1_100 };
      expect(await outbox.reschedule(c!.id, c!.claimToken, later)).toBe('rescheduled');
      expect(await outbox.retire(d!.id, d!.claimToken, 'poison', 1_100)).toBe(true);
      expect(db.pragma('synchronous', { simple: true })).toBe(FULL);
      expect((await outbox.list({ status: 'published' })).map((x) => x.key).sort()).toEqual(['k0', 'k1']);
    } finally {
      db.close();
    }
  });
});
