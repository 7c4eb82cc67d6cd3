/**
 * The fan-out calls a large fan-out makes per chunk, each as ONE statement (ADR 0071): seeding a
 * batch of chunks with the creation cursor, claiming a chunk with its items, persisting a batch
 * of results under the attempt guard, the last batch with the chunk's release, and closing a
 * chunk whose items all have a result. Each
 * applies the rule of fan-out-rules.ts in SQL (`decideClaim`, `decideResults`, the `done` case of
 * `decideRelease`); when a statement changes nothing, the store reads the rows and lets the
 * shared rule say why (or falls back to its transaction), so refusals are the memory store's.
 */
import type { ChunkClaimRef, ChunkSeed, ItemResult, SeedCursor } from '@skein/workflow-runtime/spi';
import type { Query } from './database.js';

/**
 * Insert the chunks of `seeds` that do not exist yet and their items; with `cursor`, move the
 * creation cursor (as `recordSeeded`) only when every chunk was new. Returns one row:
 * `inserted` (the new chunks as `shard/chunkId` keys) and `cursor` (1 when it moved).
 */
export function seedBatchQuery(seeds: readonly ChunkSeed[], cursor: SeedCursor | undefined): Query {
  const itemSeeds = seeds.flatMap((seed) => seed.inputs.map((input, k) => ({ seed, input, k })));
  return {
    name: 'skein_fan_out_seed_batch',
    text: `
WITH c AS (
  INSERT INTO skein_fan_out_chunks (fan_out_id, shard, chunk_id, store_alias, first_index, size, write_epoch,
    status, available_at, lease_token, worker_id, lease_expires_at, claims, recoveries, processing_failures,
    max_attempts, error)
  SELECT s.f, s.s, s.c, s.a, s.x, s.n, s.e, 'open', s.t, NULL, NULL, NULL, 0, 0, 0, s.m, NULL
  FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::bigint[], $6::int[], $7::bigint[],
    $8::bigint[], $9::int[]) AS s (f, s, c, a, x, n, e, t, m)
  ON CONFLICT DO NOTHING
  RETURNING fan_out_id, shard, chunk_id
),
i AS (
  INSERT INTO skein_fan_out_items (fan_out_id, item_index, chunk_id, shard, input, status, attempt, failures)
  SELECT c.fan_out_id, i.x, c.chunk_id, c.shard, i.input, 'pending', 0, 0
  FROM unnest($10::text[], $11::text[], $12::bigint[], $13::bigint[], $14::text[]) AS i (f, s, c, x, input)
  JOIN c ON c.fan_out_id = i.f AND c.shard = i.s AND c.chunk_id = i.c
  RETURNING 1
),
f AS (
  UPDATE skein_fan_outs SET seeded_items = CASE WHEN $17 > seeded_chunks THEN $18 ELSE seeded_items END,
    seeded_chunks = GREATEST(seeded_chunks, $17)
  WHERE $15::boolean AND fan_out_id = $16 AND status = 'creating' AND creation_token = $19
    AND (SELECT count(*) FROM c) = $20
  RETURNING 1
)
SELECT (SELECT coalesce(array_agg(c.shard || '/' || c.chunk_id::text), '{}') FROM c) AS inserted,
  (SELECT count(*) FROM i)::int AS items, (SELECT count(*) FROM f)::int AS cursor`,
    values: [
      seeds.map((s) => s.fanOutId),
      seeds.map((s) => s.shard),
      seeds.map((s) => s.chunkId),
      seeds.map((s) => s.storeAlias),
      seeds.map((s) => s.firstIndex),
      seeds.map((s) => s.inputs.length),
      seeds.map((s) => s.writeEpoch),
      seeds.map((s) => s.now),
      seeds.map((s) => s.maxAttempts),
      itemSeeds.map((i) => i.seed.fanOutId),
      itemSeeds.map((i) => i.seed.shard),
      itemSeeds.map((i) => i.seed.chunkId),
      itemSeeds.map((i) => i.seed.firstIndex + i.k),
      itemSeeds.map((i) => i.input),
      cursor !== undefined,
      cursor?.fanOutId ?? '',
      cursor?.seededChunks ?? 0,
      cursor?.seededItems ?? 0,
      cursor?.token ?? '',
      seeds.length,
    ],
  };
}

/** Move the creation cursor as `recordSeeded` does, in one statement; returns a row when the token holds. */
export function moveCursorQuery(cursor: SeedCursor): Query {
  return {
    name: 'skein_fan_out_cursor',
    text:
      'UPDATE skein_fan_outs SET seeded_items = CASE WHEN $2 > seeded_chunks THEN $3 ELSE seeded_items END, ' +
      "seeded_chunks = GREATEST(seeded_chunks, $2) WHERE fan_out_id = $1 AND status = 'creating' " +
      'AND creation_token = $4 RETURNING 1',
    values: [cursor.fanOutId, cursor.seededChunks, cursor.seededItems, cursor.token],
  };
}

/** A claim's request with its fresh lease token; an attempt's id is `<leaseToken>.<index>`, unique as the token is. */
export interface ClaimStatement {
  fanOutId: string;
  shard: string;
  chunkId: number;
  writeEpoch: number;
  workerId: string;
  now: number;
  leaseToken: string;
  leaseExpiresAt: number;
}

/**
 * `decideClaim` as one statement: lease the chunk if it is open and due, or leased with an
 * expired lease, and of the message's epoch; start an attempt of every item that is pending,
 * running (a lapsed attempt) or due for its retry; count the items still waiting. No row: refused.
 */
export function claimChunkQuery(claim: ClaimStatement): Query {
  return {
    name: 'skein_fan_out_claim_one',
    text: `
WITH c AS (
  UPDATE skein_fan_out_chunks SET status = 'leased', lease_token = $5, worker_id = $6, lease_expires_at = $7,
    claims = claims + 1
  WHERE fan_out_id = $1 AND shard = $2 AND chunk_id = $3 AND write_epoch = $4
    AND ((status = 'open' AND available_at <= $8) OR (status = 'leased' AND lease_expires_at <= $8))
  RETURNING fan_out_id, first_index, size
),
i AS (
  UPDATE skein_fan_out_items t SET status = 'running', attempt = t.attempt + 1,
    attempt_id = $5 || '.' || t.item_index::text, worker_id = $6, attempt_expires_at = $7,
    retry_at = NULL
  FROM c
  WHERE t.fan_out_id = c.fan_out_id AND t.item_index >= c.first_index AND t.item_index < c.first_index + c.size
    AND (t.status IN ('pending', 'running') OR (t.status = 'retry_scheduled' AND coalesce(t.retry_at, 0) <= $8))
  RETURNING t.item_index, t.input, t.attempt, t.attempt_id
)
SELECT (SELECT count(*) FROM skein_fan_out_items w, c WHERE w.fan_out_id = c.fan_out_id
    AND w.item_index >= c.first_index AND w.item_index < c.first_index + c.size
    AND w.status = 'retry_scheduled' AND coalesce(w.retry_at, 0) > $8)::int AS waiting,
  (SELECT coalesce(json_agg(json_build_object('index', i.item_index, 'input', i.input, 'attempt', i.attempt,
    'attemptId', i.attempt_id) ORDER BY i.item_index), '[]'::json) FROM i) AS items
FROM c`,
    values: [
      claim.fanOutId,
      claim.shard,
      claim.chunkId,
      claim.writeEpoch,
      claim.leaseToken,
      claim.workerId,
      claim.leaseExpiresAt,
      claim.now,
    ],
  };
}

/** The batch `u` and its guard (see {@link recordResultsQuery}): `ok` has a row when every result is current, else none. */
const RESULTS_CTES = `
WITH u AS (
  SELECT * FROM unnest($6::bigint[], $7::text[], $8::int[], $9::text[], $10::text[], $11::text[], $12::bigint[])
    AS u (item_index, attempt_id, attempt, status, output, error, retry_at)
),
held AS (
  SELECT max_attempts FROM skein_fan_out_chunks
  WHERE fan_out_id = $1 AND shard = $2 AND chunk_id = $3 AND status = 'leased' AND lease_token = $4
    AND worker_id = $5 AND lease_expires_at > $13
  FOR SHARE
),
guard AS (
  SELECT t.item_index FROM skein_fan_out_items t JOIN u ON u.item_index = t.item_index
  WHERE t.fan_out_id = $1 AND t.shard = $2 AND t.chunk_id = $3 AND t.status = 'running'
    AND t.attempt_id = u.attempt_id AND t.attempt = u.attempt AND t.worker_id = $5 AND t.attempt_expires_at > $13
),
ok AS (SELECT h.max_attempts FROM held h WHERE (SELECT count(*) FROM guard) = $14)`;

/** A failed result that is retried: it asks for a retry and its item has attempts left (`t` is the item, `ok` the chunk). */
const RETRY = `(u.status = 'failed' AND u.retry_at IS NOT NULL AND t.failures + 1 < ok.max_attempts)`;

/**
 * The write of the batch `u` to its items, when `ok` has its row. The retry rule reads the
 * failures of the row being updated, so each item is looked up once here (and once by `guard`).
 */
const RESULTS_UPDATE = `UPDATE skein_fan_out_items t SET
  status = CASE WHEN u.status = 'succeeded' THEN 'succeeded' WHEN ${RETRY} THEN 'retry_scheduled' ELSE 'failed' END,
  failures = t.failures + CASE WHEN u.status = 'succeeded' THEN 0 ELSE 1 END,
  attempt_expires_at = NULL,
  output = CASE WHEN u.status = 'succeeded' THEN u.output ELSE t.output END,
  error = CASE WHEN u.status = 'succeeded' THEN NULL ELSE u.error END,
  retry_at = CASE WHEN u.status = 'succeeded' THEN t.retry_at WHEN ${RETRY} THEN u.retry_at ELSE NULL END,
  finished_at = CASE WHEN ${RETRY} THEN t.finished_at ELSE $13 END
FROM u CROSS JOIN ok
WHERE t.fan_out_id = $1 AND t.item_index = u.item_index AND t.status = 'running' AND t.attempt_id = u.attempt_id
  AND t.attempt = u.attempt AND t.worker_id = $5`;

function resultsValues(ref: ChunkClaimRef, results: readonly ItemResult[], now: number): unknown[] {
  return [
    ref.fanOutId,
    ref.shard,
    ref.chunkId,
    ref.leaseToken,
    ref.workerId,
    results.map((r) => r.index),
    results.map((r) => r.attemptId),
    results.map((r) => r.attempt),
    results.map((r) => r.status),
    results.map((r) => (r.status === 'succeeded' ? r.output : null)),
    results.map((r) => (r.status === 'failed' ? r.error : null)),
    results.map((r) => (r.status === 'failed' ? r.retryAt : null)),
    now,
    results.length,
  ];
}

/**
 * `decideResults` as one statement: when the chunk's lease is held and live, and EVERY result
 * names its item's current running attempt (id, number, worker) with a live attempt lease,
 * write them all; otherwise write none. Returns the items' new statuses (no row: refused).
 * The chunk row is locked `FOR SHARE` first: every other call that changes the chunk's items
 * (claim, renewal, release, recovery) holds that row exclusively while it does, so none of them
 * runs meanwhile, and one that committed before changed the chunk row in a way that fails
 * `held` (PostgreSQL re-checks it on the newest version). Items are locked only by the update.
 */
export function recordResultsQuery(ref: ChunkClaimRef, results: readonly ItemResult[], now: number): Query {
  return {
    name: 'skein_fan_out_results_one',
    text: `${RESULTS_CTES}
${RESULTS_UPDATE}
RETURNING t.status`,
    values: resultsValues(ref, results, now),
  };
}

/**
 * `decideResults` and then the `done` case of `decideRelease` as one statement: the batch is
 * written as by {@link recordResultsQuery}, and the chunk closed in the same statement when
 * every item of it has a terminal result, counting the batch's new statuses (the statement's
 * snapshot does not see its own writes). One row per written item, with `done` 1 when the
 * chunk was closed; no row: refused, nothing written or released.
 */
export function releaseWithResultsQuery(
  ref: ChunkClaimRef,
  results: readonly ItemResult[],
  now: number,
): Query {
  return {
    name: 'skein_fan_out_results_release',
    text: `${RESULTS_CTES},
w AS (
${RESULTS_UPDATE}
  RETURNING t.item_index, t.status
),
rel AS (
  UPDATE skein_fan_out_chunks c SET status = 'done', lease_token = NULL, worker_id = NULL, lease_expires_at = NULL
  WHERE c.fan_out_id = $1 AND c.shard = $2 AND c.chunk_id = $3 AND c.status = 'leased' AND c.lease_token = $4
    AND c.worker_id = $5 AND (SELECT count(*) FROM w) = $14
    AND NOT EXISTS (SELECT 1 FROM w WHERE w.status NOT IN ('succeeded', 'failed'))
    AND NOT EXISTS (SELECT 1 FROM skein_fan_out_items t WHERE t.fan_out_id = $1 AND t.item_index >= c.first_index
      AND t.item_index < c.first_index + c.size AND t.status NOT IN ('succeeded', 'failed')
      AND t.item_index <> ALL ($6::bigint[]))
  RETURNING 1
)
SELECT w.status, (SELECT count(*) FROM rel)::int AS done FROM w`,
    values: resultsValues(ref, results, now),
  };
}

/**
 * The `done` case of `decideRelease` as one statement: the claim's chunk is closed when every
 * one of its items has a terminal result (no row: not that case, or the claim is not current).
 */
export function releaseDoneQuery(ref: ChunkClaimRef): Query {
  return {
    name: 'skein_fan_out_release_done',
    text: `
UPDATE skein_fan_out_chunks c SET status = 'done', lease_token = NULL, worker_id = NULL, lease_expires_at = NULL
WHERE c.fan_out_id = $1 AND c.shard = $2 AND c.chunk_id = $3 AND c.status = 'leased' AND c.lease_token = $4
  AND c.worker_id = $5
  AND NOT EXISTS (SELECT 1 FROM skein_fan_out_items t WHERE t.fan_out_id = $1 AND t.item_index >= c.first_index
    AND t.item_index < c.first_index + c.size AND t.status NOT IN ('succeeded', 'failed'))
RETURNING c.chunk_id`,
    values: [ref.fanOutId, ref.shard, ref.chunkId, ref.leaseToken, ref.workerId],
  };
}
