/**
 * Migrations 0015 and 0016 (ADRs 0099, 0101): the relay's claim and publish settlement read
 * their batch, not the backlog, whatever the table's statistics say. Planned from statistics, a
 * claim on a table filled since its last ANALYZE sorted every pending delivery to take its
 * batch, and the settlement joined its batch against every pending delivery (never analysed)
 * or the whole table (analysed). A list of one status and a prune read the rows of that status,
 * not the table; and no index but the primary key and the pending index holds pending rows, so
 * a claim writes to no other. The proof is PostgreSQL's own count of the rows each statement
 * read from the deliveries table, flushed by the connection that ran it.
 */
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { claimQuery, listDeliveriesQuery, pruneQuery, publishAllQuery } from '../src/outbox-queries.js';
import { outboxOnSchema, whenPostgres } from './support/pg.js';

const BACKLOG = 3_000;
const BATCH = 50;

interface Reads {
  /** Rows handed out by sequential scans of the table. */
  seqRows: number;
  /** Index entries read from the table's indexes (a bitmap scan reads every entry it matches). */
  indexEntries: number;
}

whenPostgres(() => {
  describe('postgres outbox: the relay reads its batch, not the backlog', () => {
    const onSchema = outboxOnSchema();
    /** A client on the schema of fresh stores holding `BACKLOG` pending messages, never analysed. */
    const setUp = () =>
      onSchema(
        Array.from({ length: BACKLOG }, (_, k) => ({
          id: `m-${String(k).padStart(6, '0')}`,
          topic: 't',
          key: String(k),
          payload: '{}',
          createdAt: 1_000 + k,
        })),
      );

    /** What `run` made this connection read from the deliveries table and its indexes. */
    async function readsOf(c: pg.Client, run: () => Promise<unknown>): Promise<Reads> {
      const counts = async (): Promise<Reads> => {
        await c.query('SELECT pg_stat_force_next_flush()');
        await c.query('SELECT 1'); // the flush happens when the connection goes idle
        const row = (
          await c.query<{ seq: string; idx: string }>(
            'SELECT coalesce(t.seq_tup_read, 0) AS seq, ' +
              '(SELECT coalesce(sum(i.idx_tup_read), 0) FROM pg_stat_user_indexes i WHERE i.relid = t.relid) AS idx ' +
              "FROM pg_stat_user_tables t WHERE t.relid = 'skein_outbox_deliveries'::regclass",
          )
        ).rows[0]!;
        return { seqRows: Number(row.seq), indexEntries: Number(row.idx) };
      };
      const before = await counts();
      await run();
      const after = await counts();
      return {
        seqRows: after.seqRows - before.seqRows,
        indexEntries: after.indexEntries - before.indexEntries,
      };
    }

    /** Claim a batch and mark it published, each statement's reads counted apart. */
    async function claimAndSettle(c: pg.Client, round: number) {
      let ids: string[] = [];
      const token = `tok-${round}`;
      const claim = await readsOf(c, async () => {
        const rows = (await c.query<{ id: string }>(claimQuery(1_000_000, BATCH, token, 2_000_000, 10, null)))
          .rows;
        ids = rows.map((row) => row.id);
      });
      expect(ids).toHaveLength(BATCH);
      let marked = 0;
      const settle = await readsOf(c, async () => {
        const claims = ids.map((id) => ({ id, token }));
        marked = (await c.query(publishAllQuery(claims, 1_000_000))).rowCount ?? 0;
      });
      expect(marked).toBe(BATCH);
      return { claim, settle };
    }

    /** A statement that touched its batch: no sequential scan, index entries in the batch's order of size. */
    const withinBatch = (reads: Reads) => {
      expect(reads.seqRows).toBe(0);
      expect(reads.indexEntries).toBeLessThanOrEqual(4 * BATCH);
    };

    it('on a table never analysed, a claim walks the pending index and a settlement looks up its keys', async () => {
      const c = await setUp();
      expect(
        (await c.query("SELECT reltuples FROM pg_class WHERE oid = 'skein_outbox_deliveries'::regclass"))
          .rows[0].reltuples,
      ).toBe(-1);
      for (let round = 0; round < 3; round++) {
        const { claim, settle } = await claimAndSettle(c, round);
        withinBatch(claim);
        withinBatch(settle);
      }
    });

    it('on a table analysed while everything was pending, the same', async () => {
      const c = await setUp();
      await c.query('ANALYZE skein_outbox_deliveries');
      for (let round = 0; round < 3; round++) {
        const { claim, settle } = await claimAndSettle(c, round);
        withinBatch(claim);
        withinBatch(settle);
      }
    });

    /**
     * A table of `BACKLOG` deliveries: the first 2,900 published (in batches, as a relay does),
     * one batch claimed and retired, the last 50 pending, then vacuumed (the dead row versions
     * a relay leaves are autovacuum's to clear); analysed when `analyse` says so.
     */
    async function settledTable(analyse: boolean): Promise<pg.Client> {
      const c = await setUp();
      for (let round = 0; round < 58; round++) await claimAndSettle(c, round);
      const ids = (await c.query<{ id: string }>(claimQuery(1_000_000, BATCH, 'tok-r', 2_000_000, 10, null)))
        .rows;
      await c.query(
        "UPDATE skein_outbox_deliveries SET status = 'retired', claim_token = NULL, settled_at = 1 WHERE message_id = ANY ($1::text[])",
        [ids.map((row) => row.id)],
      );
      await c.query(analyse ? 'VACUUM ANALYZE skein_outbox_deliveries' : 'VACUUM skein_outbox_deliveries');
      return c;
    }

    for (const analyse of [false, true])
      it(`a page of one status and a prune read that status's rows, not the table (${analyse ? 'analysed' : 'never analysed'})`, async () => {
        const c = await settledTable(analyse);
        const page = async (status: string, after = '') => {
          let ids: string[] = [];
          const reads = await readsOf(c, async () => {
            ids = (await c.query<{ id: string }>(listDeliveriesQuery(status, after, 10))).rows.map(
              (r) => r.id,
            );
          });
          expect(reads.seqRows).toBe(0);
          return { ids, reads };
        };
        const pending = await page('pending');
        expect(pending.ids).toEqual(
          Array.from({ length: 10 }, (_, k) => `m-${String(2_950 + k).padStart(6, '0')}`),
        );
        // Every pending delivery after the cursor is read (50), not the 2,950 settled ones.
        expect(pending.reads.indexEntries).toBeLessThanOrEqual(2 * BATCH + 20);
        const next = await page('pending', pending.ids.at(-1));
        expect(next.ids[0]).toBe('m-002960');
        const published = await page('published', 'm-001000');
        expect(published.ids[0]).toBe('m-001001');
        expect(published.reads.indexEntries).toBeLessThanOrEqual(40);
        const retired = await page('retired');
        expect(retired.ids).toHaveLength(10);
        expect(retired.reads.indexEntries).toBeLessThanOrEqual(40);
        let pruned = 0;
        const prune = await readsOf(c, async () => {
          pruned = (await c.query<{ pruned: number }>(pruneQuery(2_000_000, 10))).rows[0]!.pruned;
        });
        expect(pruned).toBe(10);
        expect(prune.seqRows).toBe(0);
        expect(prune.indexEntries).toBeLessThanOrEqual(60);
      });

    it('no index but the primary key and the pending index holds pending deliveries, so a claim writes to no other', async () => {
      const c = await setUp();
      const indexes = (
        await c.query<{ name: string; predicate: string | null }>(
          'SELECT i.indexrelid::regclass::text AS name, pg_get_expr(i.indpred, i.indrelid) AS predicate ' +
            "FROM pg_index i WHERE i.indrelid = 'skein_outbox_deliveries'::regclass ORDER BY 1",
        )
      ).rows;
      expect(indexes).toEqual([
        { name: 'skein_outbox_deliveries_available', predicate: "(status = 'pending'::text)" },
        { name: 'skein_outbox_deliveries_pkey', predicate: null },
        { name: 'skein_outbox_deliveries_published', predicate: "(status = 'published'::text)" },
        { name: 'skein_outbox_deliveries_retired', predicate: "(status = 'retired'::text)" },
      ]);
    });

    it('a claim token is held only by a pending delivery', async () => {
      const c = await setUp();
      const [first] = (await c.query<{ id: string }>(claimQuery(1_000_000, 1, 'tok', 2_000_000, 10, null)))
        .rows;
      await expect(
        c.query("UPDATE skein_outbox_deliveries SET status = 'published' WHERE message_id = $1", [first!.id]),
      ).rejects.toThrow(/skein_outbox_deliveries_token_pending/);
    });
  });
});
