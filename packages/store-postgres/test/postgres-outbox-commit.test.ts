/**
 * The relay's claim and publish settlement commit without waiting for the WAL flush (ADR
 * 0095): each statement turns `synchronous_commit` off for its own transaction only, so the
 * connection it ran on goes back to the server's setting and the appends after it on the same
 * pooled connection stay as durable as configured.
 */
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { claimQuery, publishAllQuery } from '../src/outbox-queries.js';
import { outboxOnSchema, whenPostgres } from './support/pg.js';

whenPostgres(() => {
  describe('postgres outbox: relaxed commits of the relay', () => {
    const onSchema = outboxOnSchema();
    /** A client on the schema of fresh stores holding two pending messages. */
    const setUp = () =>
      onSchema(
        ['a', 'b'].map((key) => ({ id: `m-${key}`, topic: 't', key, payload: '{}', createdAt: 1_000 })),
      );

    const setting = async (c: pg.Client) =>
      (await c.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0]!.synchronous_commit;

    it('a claim and its settlement turn synchronous_commit off for their own transaction only', async () => {
      const c = await setUp();
      const before = await setting(c);
      expect(before).not.toBe('off');
      await c.query('BEGIN');
      const claimed = (await c.query(claimQuery(2_000, 10, 'tok', 60_000, 10, null))).rows;
      expect(claimed.map((row: { id: string }) => row.id).sort()).toEqual(['m-a', 'm-b']);
      expect(await setting(c)).toBe('off');
      await c.query('COMMIT');
      expect(await setting(c)).toBe(before);

      await c.query('BEGIN');
      const claims = ['m-a', 'm-b'].map((id) => ({ id, token: 'tok' }));
      expect((await c.query(publishAllQuery(claims, 3_000))).rowCount).toBe(2);
      expect(await setting(c)).toBe('off');
      await c.query('COMMIT');
      expect(await setting(c)).toBe(before);

      // Outside a transaction block too: the statement's own transaction ends with it.
      await c.query(claimQuery(4_000, 10, 'tok2', 60_000, 10, null));
      expect(await setting(c)).toBe(before);
    });
  });
});
