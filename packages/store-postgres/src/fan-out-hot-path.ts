/**
 * The PostgreSQL fan-out store's per-chunk calls as one round trip each (ADR 0071, statements in
 * fan-out-hot-queries.ts): a batch of seeds with the cursor, a claim, a batch of results, the last
 * batch with the release, and the release of a chunk whose items all have a result. When a statement changes nothing, the rows
 * are read and the shared rule (`decideClaim`, `decideResults`, `sameSeed`) says why, so the
 * answers and errors are those of every other store.
 */
import { FanOutStaleAttemptError } from '@skein/workflow-runtime';
import { newId } from '@skein/workflow-runtime/internal';
import {
  type ChunkClaimRef,
  type ChunkRecord,
  type ChunkSeed,
  type ClaimChunkRequest,
  type ClaimChunkResult,
  type ClaimedItem,
  decideClaim,
  decideResults,
  type ItemRecord,
  type ItemResult,
  type RecordedResults,
  type SeedChunksResult,
  type SeedCursor,
  type SeedOutcome,
  sameSeed,
} from '@skein/workflow-runtime/spi';
import type { Database } from './database.js';
import {
  claimChunkQuery,
  moveCursorQuery,
  recordResultsQuery,
  releaseDoneQuery,
  releaseWithResultsQuery,
  seedBatchQuery,
} from './fan-out-hot-queries.js';
import { selectChunkQuery, selectItemRangeQuery } from './fan-out-queries.js';

/** Times a claim is tried again when its statement refused it but the rows read after say it is claimable (a race). */
const CLAIM_RETRIES = 3;

/** Seed `seeds` (and move `cursor`) in one statement; chunks that existed are compared with their seeds. */
export async function seedBatch(
  db: Database,
  seeds: readonly ChunkSeed[],
  cursor: SeedCursor | undefined,
): Promise<SeedChunksResult> {
  const row = (
    await db.query<{ inserted: string[]; cursor: number }>(
      'fanOuts.seedChunks',
      seedBatchQuery(seeds, cursor),
    )
  ).rows[0]!;
  const inserted = new Set(row.inserted);
  const outcomes: SeedOutcome[] = [];
  for (const seed of seeds)
    outcomes.push(inserted.has(`${seed.shard}/${seed.chunkId}`) ? 'seeded' : await compareSeed(db, seed));
  if (cursor === undefined) return { outcomes, cursor: null };
  if (row.cursor === 1) return { outcomes, cursor: true };
  if (outcomes.includes('mismatch') || inserted.size === seeds.length) return { outcomes, cursor: false };
  // Some chunks existed already (a creator resumed): the cursor moves now that none is a mismatch.
  const moved = await db.query('fanOuts.seedChunks', moveCursorQuery(cursor));
  return { outcomes, cursor: moved.rows.length === 1 };
}

async function compareSeed(db: Database, seed: ChunkSeed): Promise<SeedOutcome> {
  const chunk = await readChunk(db, seed.fanOutId, seed.shard, seed.chunkId);
  if (chunk === null) return 'mismatch';
  const inputs = (await readItems(db, chunk)).map((item) => item.input);
  return sameSeed(chunk, inputs, seed) ? 'exists' : 'mismatch';
}

/** Claim a chunk with its items in one statement; a refusal's reason comes from `decideClaim` on the rows. */
export async function claimInOneStatement(
  db: Database,
  request: ClaimChunkRequest,
): Promise<ClaimChunkResult> {
  for (let attempt = 0; ; attempt += 1) {
    const leaseToken = newId();
    const leaseExpiresAt = request.now + request.leaseMs;
    const statement = claimChunkQuery({ ...request, leaseToken, leaseExpiresAt });
    const row = (await db.query<{ waiting: number; items: ClaimedItem[] }>('fanOuts.claimChunk', statement))
      .rows[0];
    if (row !== undefined) {
      const claim = {
        fanOutId: request.fanOutId,
        shard: request.shard,
        chunkId: request.chunkId,
        workerId: request.workerId,
        leaseToken,
        writeEpoch: request.writeEpoch,
        leaseExpiresAt,
        items: row.items,
        waiting: row.waiting,
      };
      return { claimed: true, claim };
    }
    const chunk = await readChunk(db, request.fanOutId, request.shard, request.chunkId);
    const refused = decideClaim(chunk === null ? null : { ...chunk }, [], request);
    if (!refused.claimed) return refused;
    if (attempt >= CLAIM_RETRIES) return { claimed: false, reason: 'held', chunk };
  }
}

/** Persist a batch of results in one statement, or refuse it whole with the reason `decideResults` gives. */
export async function resultsInOneStatement(
  db: Database,
  ref: ChunkClaimRef,
  results: readonly ItemResult[],
  now: number,
): Promise<RecordedResults> {
  const recorded: RecordedResults = { succeeded: 0, failed: 0, retryScheduled: 0 };
  const first = results[0];
  if (first === undefined) return recorded;
  const statuses = (
    await db.query<{ status: ItemRecord['status'] }>(
      'fanOuts.recordResults',
      recordResultsQuery(ref, results, now),
    )
  ).rows;
  if (statuses.length === results.length) {
    for (const { status } of statuses)
      if (status === 'succeeded') recorded.succeeded += 1;
      else if (status === 'retry_scheduled') recorded.retryScheduled += 1;
      else recorded.failed += 1;
    return recorded;
  }
  return refuseResults(db, ref, results, now);
}

/** A batch was refused, nothing written: the rule, on the rows as they are now, says why. */
async function refuseResults(
  db: Database,
  ref: ChunkClaimRef,
  results: readonly ItemResult[],
  now: number,
): Promise<never> {
  const chunk = await readChunk(db, ref.fanOutId, ref.shard, ref.chunkId);
  const items = new Map((chunk === null ? [] : await readItems(db, chunk)).map((item) => [item.index, item]));
  decideResults(chunk, items, ref, results, now);
  const index = results[0]?.index ?? 0;
  throw new FanOutStaleAttemptError(ref.fanOutId, ref.chunkId, index, 'the attempt changed meanwhile');
}

/**
 * Persist the claim's last batch and close its chunk in one statement when every item then has
 * a terminal result: `done` true; false when the batch was written but the chunk is not done
 * (the caller releases it as usual). A refused batch is refused whole, nothing released, with
 * the reason `decideResults` gives.
 */
export async function resultsAndReleaseDone(
  db: Database,
  ref: ChunkClaimRef,
  results: readonly ItemResult[],
  now: number,
): Promise<boolean> {
  const first = results[0];
  if (first === undefined) return false;
  const rows = (
    await db.query<{ status: ItemRecord['status']; done: number }>(
      'fanOuts.releaseChunk',
      releaseWithResultsQuery(ref, results, now),
    )
  ).rows;
  if (rows.length === results.length) return rows[0]!.done === 1;
  await refuseResults(db, ref, results, now);
  return false;
}

/** Close the claim's chunk in one statement when every item has a result; false when that is not the case. */
export async function releaseDone(db: Database, ref: ChunkClaimRef): Promise<boolean> {
  return (await db.query('fanOuts.releaseChunk', releaseDoneQuery(ref))).rows.length === 1;
}

async function readChunk(
  db: Database,
  fanOutId: string,
  shard: string,
  chunkId: number,
): Promise<ChunkRecord | null> {
  const query = selectChunkQuery(fanOutId, shard, chunkId, false);
  return (await db.query<ChunkRecord>('fanOuts.chunk', query)).rows[0] ?? null;
}

async function readItems(db: Database, chunk: ChunkRecord): Promise<ItemRecord[]> {
  const query = selectItemRangeQuery(chunk.fanOutId, chunk.firstIndex, chunk.firstIndex + chunk.size);
  return (await db.query<ItemRecord>('fanOuts.items', query)).rows;
}
