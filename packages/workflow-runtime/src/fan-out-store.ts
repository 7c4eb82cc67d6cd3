/**
 * The fan-out SPI (docs/fan-out.md, DESIGN §10): a fan-out's items and results live in fan-out
 * tables, not in the event log. One store is the fan-out's *home* (the execution's store): it
 * holds the fan-out row (the creation lease and cursor), the placement ledger and the dispatch
 * cursors. Every chunk lives in the store of its shard (chunk `c` of a plan over `n` shards is
 * on `shards[c % n]`), with its items, its chunk lease and each item's attempt lease. With one
 * shard, home and shard are the same store.
 *
 * The store enforces the invariants, not its callers:
 * - F1: `dispatch` refuses (`FanOutNotSeededError`) until the creation cursor covers every
 *   chunk; it writes the placements, dispatch cursors and the first chunk-ready messages (to
 *   the home outbox) in one transaction.
 * - F2: the creation lease is claimed from an open or expired lease; seeding a chunk is one
 *   idempotent transaction; a plan or a chunk that does not match the stored one is a mismatch.
 * - F3: a chunk is claimed by `(fanOutId, shard, chunkId)` from an open or expired lease, with
 *   the message's write epoch; every other claim is refused with a reason.
 * - F4/F6: results are accepted, in batches, only from the current attempt id, attempt number
 *   and worker of a running item whose attempt lease is live, under the chunk's live lease;
 *   anything else is refused whole with `FanOutStaleAttemptError` and writes nothing.
 * - F5: a failure with budget left makes the item `retry_scheduled`; releasing the chunk then
 *   reopens it at the earliest `retryAt`, with its next message delayed to that time.
 * - F8: `recoverExpired` marks the attempts of expired chunk leases stale, reopens the chunk
 *   with a fresh recovery message, or fails it past the recovery limit.
 */
import { newId } from './ids.js';
import type { OutboxMessage } from './outbox.js';

/** The prefix of every chunk-ready topic: a shard's chunks are on `fanout.chunk.ready.<shard>`. */
export const FANOUT_CHUNK_READY_TOPIC = 'fanout.chunk.ready';

/** The topic of a shard's chunk-ready messages, so a worker hears only of the shards it serves. */
export function chunkReadyTopic(shard: string): string {
  return `${FANOUT_CHUNK_READY_TOPIC}.${shard}`;
}

/** Most items in one chunk. */
export const MAX_CHUNK_SIZE = 10_000;

/** Where a fan-out stands: seeding under a creation lease, dispatched, settled, or failed. */
export type FanOutStatus = 'creating' | 'dispatched' | 'settled' | 'failed';

/** What a fan-out is: the same plan, given again for the same id, finds the same fan-out. */
export interface FanOutPlan {
  /** Unique id of the fan-out. */
  fanOutId: string;
  /** The execution that fans out (its store is the fan-out's home). */
  executionId: string;
  /** The fan-out's name within its execution (`ctx.fanOut(name, …)`). */
  name: string;
  /** The task every item runs, and its version. */
  task: string;
  taskVersion: number;
  /** Items per chunk, 1 to `MAX_CHUNK_SIZE`. */
  chunkSize: number;
  /** The shards chunks are placed on, in placement order (chunk `c` on `shards[c % n]`); distinct, at least one. */
  shards: readonly string[];
  /** Every item must succeed for the fan-out to complete. */
  required: boolean;
  /** Task attempts per item, an integer >= 1. */
  maxAttempts: number;
}

/** A fan-out row, in its home store. */
export interface FanOutRecord extends FanOutPlan {
  status: FanOutStatus;
  /** How many items the plan has; null until dispatch (the source is read in pages). */
  total: number | null;
  /** The creation cursor: chunks `0 … seededChunks - 1` are seeded in their shards. */
  seededChunks: number;
  /** Items in the seeded chunks. */
  seededItems: number;
  /** Token of the creation lease (null once creation ended). */
  creationToken: string | null;
  creationOwner: string | null;
  creationExpiresAt: number | null;
  createdAt: number;
  dispatchedAt: number | null;
  settledAt: number | null;
  /** Why the fan-out failed (null unless `failed`). */
  error: string | null;
  /** The encoded settlement (null until `settled`). */
  summary: string | null;
}

/** One shard's part of a fan-out, in the home store's placement ledger. */
export interface Placement {
  fanOutId: string;
  shard: string;
  /** How many chunks of the plan are on this shard. */
  chunks: number;
  /** Messages carry it; a worker holding another epoch's message is refused. */
  writeEpoch: number;
  /** The dispatch cursor: this shard's first `dispatched` chunks have a chunk-ready message. */
  dispatched: number;
}

/** Who asks for a creation lease, when, and for how long. */
export interface CreationLeaseRequest {
  owner: string;
  now: number;
  ttlMs: number;
}

/**
 * What {@link FanOutStore.create} did: `created` (new, the caller holds the creation lease),
 * `claimed` (still creating, its lease was open or expired; the caller holds it now), `held`
 * (another holder's lease is live), `done` (creation ended: dispatched, settled or failed) or
 * `mismatch` (the stored plan differs; a fan-out still creating is failed by it, F2).
 */
export type CreateFanOutOutcome = 'created' | 'claimed' | 'held' | 'done' | 'mismatch';

/** The answer of {@link FanOutStore.create}. */
export interface CreateFanOutResult {
  outcome: CreateFanOutOutcome;
  fanOut: FanOutRecord;
  /** The creation lease's token when the caller holds it (created, claimed), else null. */
  token: string | null;
  /** Which field differs, on a mismatch. */
  mismatch?: string;
}

/** One chunk as the creator seeds it into its shard's store. */
export interface ChunkSeed {
  fanOutId: string;
  shard: string;
  chunkId: number;
  /** Names the store the shard lives in, for messages (usually the shard itself). */
  storeAlias: string;
  /** Index of the chunk's first item (`chunkId * chunkSize`). */
  firstIndex: number;
  /** The items' encoded inputs, in index order; at least one. */
  inputs: readonly string[];
  writeEpoch: number;
  /** Task attempts per item. */
  maxAttempts: number;
  now: number;
}

/** What {@link FanOutStore.seedChunk} did: stored now, stored before identically, or stored differently. */
export type SeedOutcome = 'seeded' | 'exists' | 'mismatch';

/** Most chunk seeds in one {@link FanOutStore.seedChunks} call. */
export const MAX_SEED_BATCH = 1_000;

/** The creation cursor a seed batch moves in the same transaction, when the seeding store is the fan-out's home. */
export interface SeedCursor {
  fanOutId: string;
  /** The creation lease's token; the cursor moves only under the live one. */
  token: string;
  /** The cursor after the batch: chunks `0 … seededChunks - 1` seeded, holding `seededItems` items. */
  seededChunks: number;
  seededItems: number;
}

/**
 * What {@link FanOutStore.seedChunks} did: each seed's outcome, in order, and whether the
 * cursor moved (null when none was given; false when a seed was a mismatch or the token is
 * not the creation lease's).
 */
export interface SeedChunksResult {
  outcomes: SeedOutcome[];
  cursor: boolean | null;
}

/** Where a chunk stands: claimable from `availableAt` (open), leased, or terminal. */
export type ChunkStatus = 'open' | 'leased' | 'done' | 'failed';

/** A chunk row, in its shard's store. */
export interface ChunkRecord {
  fanOutId: string;
  shard: string;
  chunkId: number;
  storeAlias: string;
  firstIndex: number;
  size: number;
  writeEpoch: number;
  status: ChunkStatus;
  /** An open chunk is claimable from this time (a retry window delays it). */
  availableAt: number;
  leaseToken: string | null;
  workerId: string | null;
  leaseExpiresAt: number | null;
  /** How many times it was claimed. */
  claims: number;
  /** How many times an expired lease of it was recovered (F8). */
  recoveries: number;
  /** How many times a worker released it for a failure of its own (F5). */
  processingFailures: number;
  maxAttempts: number;
  /** Why it failed (null unless `failed`). */
  error: string | null;
}

/** Where an item stands. */
export type ItemStatus = 'pending' | 'running' | 'retry_scheduled' | 'succeeded' | 'failed';

/** An item row, in its chunk's store. */
export interface ItemRecord {
  fanOutId: string;
  index: number;
  chunkId: number;
  shard: string;
  /** The encoded input. */
  input: string;
  status: ItemStatus;
  /** Attempts started (a stale one counts; it never spends the task's budget). */
  attempt: number;
  /** Task failures so far; `maxAttempts` of them end the item. */
  failures: number;
  /** The current attempt's id, worker and lease (null when no attempt runs). */
  attemptId: string | null;
  workerId: string | null;
  attemptExpiresAt: number | null;
  /** When a `retry_scheduled` item may run again. */
  retryAt: number | null;
  /** The encoded output of a succeeded item. */
  output: string | null;
  /** The last failure's description (the terminal one of a failed item). */
  error: string | null;
  finishedAt: number | null;
}

/** A chunk claim's request: the chunk, the message's write epoch, the worker and the lease. */
export interface ClaimChunkRequest {
  fanOutId: string;
  shard: string;
  chunkId: number;
  writeEpoch: number;
  workerId: string;
  now: number;
  leaseMs: number;
}

/** What names a claim in later calls. */
export interface ChunkClaimRef {
  fanOutId: string;
  shard: string;
  chunkId: number;
  workerId: string;
  leaseToken: string;
}

/** An item attempt the claim started. */
export interface ClaimedItem {
  index: number;
  input: string;
  attempt: number;
  attemptId: string;
}

/** A live chunk claim: the items it started now, and how many still wait for their retry window. */
export interface ChunkClaim extends ChunkClaimRef {
  writeEpoch: number;
  leaseExpiresAt: number;
  items: ClaimedItem[];
  waiting: number;
}

/**
 * Why a claim was refused: `unknown` (no such chunk), `epoch` (the message's write epoch is
 * not the chunk's), `held` (another live lease), `finished` (done or failed) or `not-yet`
 * (open, but its retry window has not come).
 */
export type ClaimRefusal = 'unknown' | 'epoch' | 'held' | 'finished' | 'not-yet';

/** The answer of {@link FanOutStore.claimChunk}. */
export type ClaimChunkResult =
  | { claimed: true; claim: ChunkClaim }
  | { claimed: false; reason: ClaimRefusal; chunk: ChunkRecord | null };

/** One attempt's result. A failure with `retryAt` null is not retried; budget is the store's to count. */
export type ItemResult =
  | { index: number; attemptId: string; attempt: number; status: 'succeeded'; output: string }
  | {
      index: number;
      attemptId: string;
      attempt: number;
      status: 'failed';
      error: string;
      retryAt: number | null;
    };

/** What a batch of results did. */
export interface RecordedResults {
  succeeded: number;
  failed: number;
  retryScheduled: number;
}

/** Options of {@link FanOutStore.releaseChunk}. */
export interface ReleaseChunkOptions {
  now: number;
  /**
   * The claim's last results (default: none): persisted under the attempt guard (F4) as by
   * `recordResults` at `now`, before the chunk is released, so the last batch needs no call
   * of its own (the stores write a batch that closes the chunk and the release in one commit).
   * A batch `recordResults` would refuse is refused whole with `FanOutStaleAttemptError`, and
   * then nothing is released.
   */
  results?: readonly ItemResult[];
  /** The worker's own failure (not the task's), spending the chunk's processing budget. */
  processingFailure?: string;
  /** Processing failures after which the chunk fails (default: `DEFAULT_MAX_PROCESSING_FAILURES`). */
  maxProcessingFailures?: number;
  /** A chunk requeued after a processing failure is claimable again this much later (default: 0). */
  requeueDelayMs?: number;
}

/**
 * What releasing did: the chunk is `done` (every item terminal), `waiting` (reopened at the
 * earliest retry window), `requeued` (reopened for unfinished items), `failed` (past its
 * processing budget; its unfinished items failed), or `lost` (the claim was not current).
 */
export type ReleaseOutcome =
  | { status: 'done' }
  | { status: 'waiting' | 'requeued'; availableAt: number; messageId: string }
  | { status: 'failed'; error: string }
  | { status: 'lost' };

/** Options of {@link FanOutStore.recoverExpired}. */
export interface RecoverExpiredOptions {
  now: number;
  /** At most this many chunks per call, an integer >= 1. */
  limit: number;
  /** A chunk recovered this many times already fails instead (default: `DEFAULT_RECOVERY_LIMIT`). */
  recoveryLimit?: number;
}

/** One chunk {@link FanOutStore.recoverExpired} dealt with. */
export interface RecoveredChunk {
  fanOutId: string;
  shard: string;
  chunkId: number;
  /** Reopened with a recovery message, failed past the recovery limit, or done (every item had a result). */
  outcome: 'requeued' | 'failed' | 'done';
  /** Running attempts marked stale. */
  staleAttempts: number;
  /** The recovery message's id (requeued only). */
  messageId?: string;
}

/** Options of {@link FanOutStore.dispatch}. */
export interface DispatchOptions {
  /** The plan's item count, now that the source ended; must equal the seeded items. */
  total: number;
  now: number;
  /** Chunks per shard that get a message now; the rest wait for `advanceDispatch` (default: all). */
  window?: number;
}

/** Counts of one fan-out's chunks and items in one store. */
export interface FanOutCounts {
  chunks: Record<ChunkStatus, number>;
  items: Record<ItemStatus, number>;
}

/** The payload of a chunk-ready message (JSON). */
export interface ChunkReadyPayload {
  fanOutId: string;
  shard: string;
  chunkId: number;
  storeAlias: string;
  writeEpoch: number;
  /** Why it was sent: first dispatch, a retry window, a requeue, or a recovery. */
  reason: 'dispatch' | 'retry' | 'requeue' | 'recovery';
}

/** A chunk-ready message on its shard's topic: a fresh id (its dedupe key), keyed by the chunk, available at `availableAt`. */
export function chunkReadyMessage(payload: ChunkReadyPayload, now: number, availableAt = now): OutboxMessage {
  return {
    id: newId(),
    topic: chunkReadyTopic(payload.shard),
    key: `${payload.fanOutId}/${payload.shard}/${payload.chunkId}`,
    payload: JSON.stringify(payload),
    createdAt: now,
    availableAt,
  };
}

/** Processing failures of a chunk before it fails, unless the caller says otherwise. */
export const DEFAULT_MAX_PROCESSING_FAILURES = 3;

/** Recoveries of a chunk before it fails, unless the caller says otherwise. */
export const DEFAULT_RECOVERY_LIMIT = 5;

/** Default page size of {@link FanOutStore.items}. */
export const DEFAULT_ITEMS_LIMIT = 1_000;

/**
 * The fan-out tables of one store: home rows (creation, placements, dispatch, settlement) and
 * shard rows (chunks and items). See the module comment for the invariants each call keeps.
 */
export interface FanOutStore {
  /** Create the fan-out and take its creation lease, or find the existing one (F2). */
  create(plan: FanOutPlan, lease: CreationLeaseRequest): Promise<CreateFanOutResult>;
  /** Extend the creation lease; false when `token` is not the live one. */
  renewCreation(fanOutId: string, token: string, now: number, ttlMs: number): Promise<boolean>;
  /** Advance the creation cursor (never backwards); false when `token` is not the live lease. */
  recordSeeded(fanOutId: string, token: string, seededChunks: number, seededItems: number): Promise<boolean>;
  /** Seed one chunk and its items in one idempotent transaction (F2). */
  seedChunk(seed: ChunkSeed): Promise<SeedOutcome>;
  /**
   * Seed up to `MAX_SEED_BATCH` chunks in one transaction, each as `seedChunk` would (F2), and,
   * with `cursor`, move the creation cursor as `recordSeeded` would in the same transaction,
   * only when no seed is a mismatch (this store is then the fan-out's home).
   */
  seedChunks(seeds: readonly ChunkSeed[], cursor?: SeedCursor): Promise<SeedChunksResult>;
  /**
   * End creation (F1): placements, dispatch cursors and the first chunk-ready messages in one
   * transaction. False when `token` is not the live lease; `FanOutNotSeededError` when the
   * cursor does not cover the plan.
   */
  dispatch(fanOutId: string, token: string, options: DispatchOptions): Promise<boolean>;
  /** Write messages for a shard's chunks `from … from + count - 1`, if its cursor is at `from`. */
  advanceDispatch(
    fanOutId: string,
    shard: string,
    from: number,
    count: number,
    now: number,
  ): Promise<boolean>;
  /** Fail a fan-out that is not settled; false when it already ended. */
  fail(fanOutId: string, reason: string, now: number): Promise<boolean>;
  /** Settle a dispatched fan-out with its encoded summary; false unless it was dispatched. */
  settle(fanOutId: string, summary: string, now: number): Promise<boolean>;
  /** The fan-out row, or null. */
  get(fanOutId: string): Promise<FanOutRecord | null>;
  /** The placement ledger, in placement order. */
  placements(fanOutId: string): Promise<Placement[]>;
  /** Claim a chunk from an open or expired lease and start its due items (F3). */
  claimChunk(request: ClaimChunkRequest): Promise<ClaimChunkResult>;
  /** Extend the chunk lease and its running attempts' leases; false when the claim is not current. */
  renewChunk(claim: ChunkClaimRef, now: number, leaseMs: number): Promise<boolean>;
  /** Persist a batch of results under the attempt guard (F4), or refuse it whole. */
  recordResults(claim: ChunkClaimRef, results: readonly ItemResult[], now: number): Promise<RecordedResults>;
  /** End a claim (F5), after persisting `options.results` with it: done, waiting for a retry window, requeued, or failed. */
  releaseChunk(claim: ChunkClaimRef, options: ReleaseChunkOptions): Promise<ReleaseOutcome>;
  /** Recover chunks whose lease expired (F8). */
  recoverExpired(options: RecoverExpiredOptions): Promise<RecoveredChunk[]>;
  /** One chunk, or null. */
  chunk(fanOutId: string, shard: string, chunkId: number): Promise<ChunkRecord | null>;
  /** This store's items of a fan-out, by index, from `afterIndex + 1` (default: from 0), at most `limit`. */
  items(fanOutId: string, query?: { afterIndex?: number; limit?: number }): Promise<ItemRecord[]>;
  /** This store's counts of a fan-out's chunks and items. */
  counts(fanOutId: string): Promise<FanOutCounts>;
  /** This store's counts of a fan-out's chunks only (cheap: one row per chunk, not per item). */
  chunkCounts(fanOutId: string): Promise<FanOutCounts['chunks']>;
}

/** The first field in which a stored plan differs from `plan`, or undefined when they match. */
export function planMismatch(stored: FanOutPlan, plan: FanOutPlan): string | undefined {
  const fields = [
    'executionId',
    'name',
    'task',
    'taskVersion',
    'chunkSize',
    'required',
    'maxAttempts',
  ] as const;
  for (const field of fields) {
    if (stored[field] !== plan[field])
      return `${field}: stored ${JSON.stringify(stored[field])}, given ${JSON.stringify(plan[field])}`;
  }
  if (stored.shards.join('\u0000') !== plan.shards.join('\u0000'))
    return `shards: stored ${JSON.stringify(stored.shards)}, given ${JSON.stringify(plan.shards)}`;
  return undefined;
}

/** How many chunks a plan of `total` items has. */
export function chunkCount(total: number, chunkSize: number): number {
  return Math.ceil(total / chunkSize);
}

/** How many of `chunks` chunks land on the shard at `position` of `shardCount` (chunk `c` on `c % n`). */
export function chunksOnShard(chunks: number, shardCount: number, position: number): number {
  return Math.max(0, Math.ceil((chunks - position) / shardCount));
}

/** The chunk id of the `k`-th chunk of the shard at `position` of `shardCount`. */
export function chunkIdOnShard(k: number, shardCount: number, position: number): number {
  return k * shardCount + position;
}

/** Empty counts, every status at zero. */
export function emptyCounts(): FanOutCounts {
  return {
    chunks: { open: 0, leased: 0, done: 0, failed: 0 },
    items: { pending: 0, running: 0, retry_scheduled: 0, succeeded: 0, failed: 0 },
  };
}
