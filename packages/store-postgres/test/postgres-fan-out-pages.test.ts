/**
 * Migration 0014 (ADR 0090): item rows are seeded with room on their pages, so the claim and the
 * result (the two updates every item gets) stay on the item's page as heap-only tuples instead
 * of moving each row to a new page with a new primary-key entry. The item's `ctid` block is
 * the proof: a row version that left its page has another block.
 */
import { INITIAL_WRITE_EPOCH } from '@skein/workflow-runtime/spi';
import { describe, expect, it } from 'vitest';
import { adminQuery, openTestStores, whenPostgres } from './support/pg.js';

const SIZE = 100;

whenPostgres(() => {
  describe('postgres fan-out: item pages', () => {
    it('an item claimed and given its result stays on the page it was seeded on', async () => {
      const stores = await openTestStores();
      try {
        const plan = {
          fanOutId: 'f1',
          executionId: 'e1',
          name: 'cases',
          task: 'score',
          taskVersion: 1,
          chunkSize: SIZE,
          shards: ['main'],
          required: true,
          maxAttempts: 2,
        };
        const { token } = await stores.fanOuts.create(plan, { owner: 'a', now: 1_000, ttlMs: 60_000 });
        const seeds = [0, 1, 2].map((chunkId) => ({
          fanOutId: 'f1',
          shard: 'main',
          chunkId,
          storeAlias: 'main',
          firstIndex: chunkId * SIZE,
          inputs: Array.from({ length: SIZE }, (_, k) => JSON.stringify({ i: chunkId * SIZE + k })),
          writeEpoch: INITIAL_WRITE_EPOCH,
          maxAttempts: 2,
          now: 1_000,
        }));
        const cursor = { fanOutId: 'f1', token: token!, seededChunks: 3, seededItems: 3 * SIZE };
        await stores.fanOuts.seedChunks(seeds, cursor);
        expect(await stores.fanOuts.dispatch('f1', token!, { total: 3 * SIZE, now: 1_000 })).toBe(true);
        const blocks = () =>
          adminQuery<{ item_index: string; block: string }>(
            `SELECT item_index, (ctid::text::point)[0]::bigint AS block FROM "${stores.schema}".skein_fan_out_items ` +
              "WHERE fan_out_id = 'f1' ORDER BY item_index",
          );
        const seeded = await blocks();
        expect(seeded).toHaveLength(3 * SIZE);
        // A worker id as long as FanOutWorker's default (`worker-` and an id).
        const workerId = 'worker-01JD3Z8Q9X4V7T2N5K6M8P0R1S';
        const claimed = await stores.fanOuts.claimChunk({
          fanOutId: 'f1',
          shard: 'main',
          chunkId: 1,
          writeEpoch: INITIAL_WRITE_EPOCH,
          workerId,
          now: 2_000,
          leaseMs: 10_000,
        });
        if (!claimed.claimed) throw new Error(`claim refused: ${claimed.reason}`);
        const { claim } = claimed;
        const ref = { fanOutId: 'f1', shard: 'main', chunkId: 1, workerId, leaseToken: claim.leaseToken };
        expect(await blocks()).toEqual(seeded);
        const results = claim.items.map((item) => ({
          index: item.index,
          attemptId: item.attemptId,
          attempt: item.attempt,
          status: 'succeeded' as const,
          output: JSON.stringify({ score: item.index }),
        }));
        const released = await stores.fanOuts.releaseChunk(ref, { now: 3_000, results });
        expect(released.status).not.toBe('lost');
        const done = await adminQuery<{ n: string }>(
          `SELECT count(*) AS n FROM "${stores.schema}".skein_fan_out_items WHERE fan_out_id = 'f1' AND status = 'succeeded'`,
        );
        expect(Number(done[0]!.n)).toBe(SIZE);
        expect(await blocks()).toEqual(seeded);
      } finally {
        await stores.close();
      }
    });
  });
});
