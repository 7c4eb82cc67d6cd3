/**
 * Migration 0015 (ADR 0099): the relay's claim and publish settlement read their batch, not
 * the backlog, whatever the table's statistics say. Planned from statistics, a claim on a table
 * filled since its last ANALYZE sorted every pending delivery to take its batch, and the
 * settlement joined its batch against every pending delivery (never analysed) or the whole
 * table (analysed). The proof is PostgreSQL's own count of the rows each statement read from
 * the deliveries table, flushed by the connection that ran it.
 */
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { claimQuery, publishAllQuery } from '../src/outbox-queries.js';
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
  });
});
