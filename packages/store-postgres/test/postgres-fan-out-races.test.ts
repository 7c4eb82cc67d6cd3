/**
 * The one-statement results write on PostgreSQL (ADR 0071) against a call that holds the chunk
 * row: a recovery that locked the chunk (its lease expired) and puts its running items back
 * to pending. The results statement waits for it and is then refused (F4); it never writes
 * under the recovery, whose write-back would otherwise drop the accepted results (F6).
 */
import { FanOutStaleAttemptError } from '@skein/workflow-runtime';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { claimedChunkOfThree } from './support/fan-out-chunk.js';
import { openTestStores, PG_URL, whenPostgres } from './support/pg.js';

whenPostgres(() => {
  describe('postgres fan-out: results against a chunk lock held elsewhere', () => {
    it('F4/F6: results wait for a recovery holding the chunk, then are refused; the recovery stands', async () => {
      const stores = await openTestStores();
      const other = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${stores.schema}` });
      await other.connect();
      try {
        const { claim, ref } = await claimedChunkOfThree(stores.fanOuts, 'f1', 'w1');
        // Another transaction holds the chunk row, as a recovery does while it decides.
        await other.query('BEGIN');
        await other.query(
          "SELECT 1 FROM skein_fan_out_chunks WHERE fan_out_id = 'f1' AND chunk_id = 0 FOR UPDATE",
        );
        const results = claim.items.map((item) => ({
          index: item.index,
          attemptId: item.attemptId,
          attempt: item.attempt,
          status: 'succeeded' as const,
          output: '{"ok":true}',
        }));
        const written = stores.fanOuts.recordResults(ref, results, 3_000).then(
          () => 'written',
          (error: unknown) => error,
        );
        await new Promise((resolve) => setTimeout(resolve, 300));
        // The recovery: running attempts back to pending, the chunk open again.
        await other.query(
          "UPDATE skein_fan_out_items SET status = 'pending', attempt_id = NULL, worker_id = NULL, " +
            "attempt_expires_at = NULL WHERE fan_out_id = 'f1'",
        );
        await other.query(
          "UPDATE skein_fan_out_chunks SET status = 'open', lease_token = NULL, worker_id = NULL, " +
            "lease_expires_at = NULL, recoveries = recoveries + 1 WHERE fan_out_id = 'f1' AND chunk_id = 0",
        );
        await other.query('COMMIT');
        const outcome = await written;
        expect(outcome).toBeInstanceOf(FanOutStaleAttemptError);
        const items = await stores.fanOuts.items('f1');
        expect(items.map((item) => [item.status, item.output])).toEqual([
          ['pending', null],
          ['pending', null],
          ['pending', null],
        ]);
        expect(await stores.fanOuts.chunk('f1', 'main', 0)).toMatchObject({ status: 'open', recoveries: 1 });
      } finally {
        await other.end();
        await stores.close();
      }
    });
  });
});
