/**
 * The fan-out SPI's rules as functions over rows (fan-out-store.ts has the invariants). Each
 * takes the rows one call reads (a fan-out, a chunk and its items), changes them in place and
 * says what it did; a store reads the rows inside one transaction (locking them), applies the
 * rule, and writes back what changed. So every store decides exactly as the memory store does,
 * and a store's own code is reading and writing rows.
 */
import { FanOutNotSeededError, FanOutStaleAttemptError } from './errors.js';
import { clearCreation, endFanOut, newFanOut } from './fan-out-rows.js';
import {
  type ChunkClaim,
  type ChunkClaimRef,
  type ChunkReadyPayload,
  type ChunkRecord,
  type ChunkSeed,
  type ClaimChunkRequest,
  type ClaimChunkResult,
  type CreateFanOutResult,
  type CreationLeaseRequest,
  chunkCount,
  chunkIdOnShard,
  chunkReadyMessage,
  chunksOnShard,
  DEFAULT_MAX_PROCESSING_FAILURES,
  DEFAULT_RECOVERY_LIMIT,
  type DispatchOptions,
  type FanOutPlan,
  type FanOutRecord,
  type ItemRecord,
  type ItemResult,
  type Placement,
  planMismatch,
  type RecordedResults,
  type RecoveredChunk,
  type ReleaseChunkOptions,
  type ReleaseOutcome,
} from './fan-out-store.js';
import { newId } from './ids.js';
import type { OutboxMessage } from './outbox.js';

/** The write epoch of every placement when a fan-out is dispatched. */
export const INITIAL_WRITE_EPOCH = 1;

/** What {@link decideCreate} decided: the answer, and the row to insert or update (null: none). */
export interface CreateDecision {
  result: CreateFanOutResult;
  write: 'insert' | 'update' | null;
  row: FanOutRecord;
}

/** F2: create the fan-out, claim its creation lease, or report why not. */
export function decideCreate(
  row: FanOutRecord | null,
  plan: FanOutPlan,
  lease: CreationLeaseRequest,
): CreateDecision {
  if (row === null) {
    const created = newFanOut(plan, lease);
    return {
      result: { outcome: 'created', fanOut: { ...created }, token: created.creationToken },
      write: 'insert',
      row: created,
    };
  }
  const mismatch = planMismatch(row, plan);
  if (mismatch !== undefined) {
    const creating = row.status === 'creating';
    if (creating) endFanOut(row, 'failed', lease.now, `plan mismatch: ${mismatch}`);
    return {
      result: { outcome: 'mismatch', fanOut: { ...row }, token: null, mismatch },
      write: creating ? 'update' : null,
      row,
    };
  }
  if (row.status !== 'creating')
    return { result: { outcome: 'done', fanOut: { ...row }, token: null }, write: null, row };
  const live = row.creationExpiresAt !== null && row.creationExpiresAt > lease.now;
  if (live && row.creationOwner !== lease.owner)
    return { result: { outcome: 'held', fanOut: { ...row }, token: null }, write: null, row };
  row.creationToken = newId();
  row.creationOwner = lease.owner;
  row.creationExpiresAt = lease.now + lease.ttlMs;
  return {
    result: { outcome: 'claimed', fanOut: { ...row }, token: row.creationToken },
    write: 'update',
    row,
  };
}

/** True when `row` is creating under `token`. */
export function holdsCreation(row: FanOutRecord | null, token: string): row is FanOutRecord {
  return row?.status === 'creating' && row.creationToken === token;
}

/**
 * F1: end creation of `row` (creating under the caller's token): its placements and the first
 * messages. Throws `FanOutNotSeededError` unless the cursor covers the plan. Changes `row`.
 * `messages` is lazy (one chunk-ready message per dispatched chunk, made as it is read), so a
 * store writes them a batch at a time, in the same transaction, without holding them all.
 */
export function decideDispatch(
  row: FanOutRecord,
  options: DispatchOptions,
): { placements: Placement[]; messages: Iterable<OutboxMessage> } {
  const chunks = chunkCount(options.total, row.chunkSize);
  if (row.seededChunks !== chunks || row.seededItems !== options.total)
    throw new FanOutNotSeededError(row.fanOutId, row.seededChunks, chunks, row.seededItems, options.total);
  const window = options.window ?? Number.POSITIVE_INFINITY;
  const placements = row.shards.map((shard, position): Placement => {
    const onShard = chunksOnShard(chunks, row.shards.length, position);
    const dispatched = Math.min(window, onShard);
    return { fanOutId: row.fanOutId, shard, chunks: onShard, writeEpoch: INITIAL_WRITE_EPOCH, dispatched };
  });
  const messages = {
    *[Symbol.iterator]() {
      for (const [position, placement] of placements.entries())
        yield* dispatchMessages(row, placement, position, 0, placement.dispatched, options.now);
    },
  };
  row.total = options.total;
  row.status = 'dispatched';
  row.dispatchedAt = options.now;
  clearCreation(row);
  return { placements, messages };
}

/** Move a placement's dispatch cursor from `from` by up to `count`; null when it is not at `from`. */
export function decideAdvance(
  row: FanOutRecord | null,
  placement: Placement | undefined,
  from: number,
  count: number,
  now: number,
): OutboxMessage[] | null {
  if (row?.status !== 'dispatched' || placement === undefined || placement.dispatched !== from) return null;
  const position = row.shards.indexOf(placement.shard);
  const to = Math.min(from + count, placement.chunks);
  placement.dispatched = to;
  return [...dispatchMessages(row, placement, position, from, to, now)];
}

/** Whether a stored chunk and its items are exactly what `seed` would write (F2). */
export function sameSeed(chunk: ChunkRecord, inputs: readonly string[], seed: ChunkSeed): boolean {
  return (
    chunk.firstIndex === seed.firstIndex &&
    chunk.size === seed.inputs.length &&
    chunk.writeEpoch === seed.writeEpoch &&
    chunk.storeAlias === seed.storeAlias &&
    inputs.length === seed.inputs.length &&
    inputs.every((input, i) => input === seed.inputs[i])
  );
}

/** F3: claim `chunk` (its items in index order) or say why not. Changes the rows on a claim. */
export function decideClaim(
  chunk: ChunkRecord | null,
  items: readonly ItemRecord[],
  request: ClaimChunkRequest,
): ClaimChunkResult {
  const { now } = request;
  if (chunk === null) return { claimed: false, reason: 'unknown', chunk: null };
  const refusal =
    chunk.writeEpoch !== request.writeEpoch
      ? 'epoch'
      : chunk.status === 'done' || chunk.status === 'failed'
        ? 'finished'
        : chunk.status === 'leased' && (chunk.leaseExpiresAt ?? 0) > now
          ? 'held'
          : chunk.status === 'open' && chunk.availableAt > now
            ? 'not-yet'
            : undefined;
  if (refusal !== undefined) return { claimed: false, reason: refusal, chunk: { ...chunk } };
  const leaseToken = newId();
  const leaseExpiresAt = now + request.leaseMs;
  Object.assign(chunk, { status: 'leased', leaseToken, workerId: request.workerId, leaseExpiresAt });
  chunk.claims += 1;
  const claim: ChunkClaim = {
    fanOutId: chunk.fanOutId,
    shard: chunk.shard,
    chunkId: chunk.chunkId,
    workerId: request.workerId,
    leaseToken,
    writeEpoch: chunk.writeEpoch,
    leaseExpiresAt,
    items: [],
    waiting: 0,
  };
  for (const item of items) {
    if (item.status === 'retry_scheduled' && (item.retryAt ?? 0) > now) claim.waiting += 1;
    else if (item.status === 'pending' || item.status === 'running' || item.status === 'retry_scheduled') {
      startAttempt(item, request.workerId, leaseExpiresAt);
      claim.items.push({
        index: item.index,
        input: item.input,
        attempt: item.attempt,
        attemptId: item.attemptId!,
      });
    }
  }
  return { claimed: true, claim };
}

/** True when `ref` holds the live lease of `chunk` at `now`. */
export function holdsChunk(chunk: ChunkRecord | null, ref: ChunkClaimRef, now: number): chunk is ChunkRecord {
  return (
    chunk?.status === 'leased' &&
    chunk.leaseToken === ref.leaseToken &&
    chunk.workerId === ref.workerId &&
    (chunk.leaseExpiresAt ?? 0) > now
  );
}

/** Extend a held chunk's lease and its running attempts'; false (nothing changed) when not held. */
export function decideRenew(
  chunk: ChunkRecord | null,
  items: readonly ItemRecord[],
  ref: ChunkClaimRef,
  now: number,
  leaseMs: number,
): boolean {
  if (!holdsChunk(chunk, ref, now)) return false;
  chunk.leaseExpiresAt = now + leaseMs;
  for (const item of items)
    if (item.status === 'running' && item.workerId === ref.workerId) item.attemptExpiresAt = now + leaseMs;
  return true;
}

/**
 * F4: accept a batch of results (the items of `results`, by index, in `items`) or throw
 * `FanOutStaleAttemptError` before changing anything. Changes the accepted items.
 */
export function decideResults(
  chunk: ChunkRecord | null,
  items: ReadonlyMap<number, ItemRecord>,
  ref: ChunkClaimRef,
  results: readonly ItemResult[],
  now: number,
): RecordedResults {
  const recorded: RecordedResults = { succeeded: 0, failed: 0, retryScheduled: 0 };
  const first = results[0];
  if (first === undefined) return recorded;
  if (!holdsChunk(chunk, ref, now))
    throw new FanOutStaleAttemptError(ref.fanOutId, ref.chunkId, first.index, 'the chunk lease is not held');
  const rows = results.map((result) => {
    const item = items.get(result.index);
    const reason = staleReason(item, chunk, ref.workerId, result, now);
    if (reason !== undefined)
      throw new FanOutStaleAttemptError(ref.fanOutId, ref.chunkId, result.index, reason);
    return item!;
  });
  results.forEach((result, i) => {
    recorded[applyResult(rows[i]!, result, chunk.maxAttempts, now)] += 1;
  });
  return recorded;
}

/** F5: end a claim of `chunk` (its items in index order). Changes the rows; `message` is to be written with them. */
export function decideRelease(
  chunk: ChunkRecord | null,
  items: readonly ItemRecord[],
  ref: ChunkClaimRef,
  options: ReleaseChunkOptions,
): { outcome: ReleaseOutcome; message?: OutboxMessage } {
  if (chunk?.status !== 'leased' || chunk.leaseToken !== ref.leaseToken || chunk.workerId !== ref.workerId)
    return { outcome: { status: 'lost' } };
  for (const item of items) if (item.status === 'running') returnAttempt(item);
  const unfinished = items.filter((item) => item.status === 'pending').length;
  const waiting = items.filter((item) => item.status === 'retry_scheduled');
  clearLease(chunk);
  if (unfinished === 0 && waiting.length === 0) {
    chunk.status = 'done';
    return { outcome: { status: 'done' } };
  }
  const { now } = options;
  if (options.processingFailure !== undefined) {
    chunk.processingFailures += 1;
    const max = options.maxProcessingFailures ?? DEFAULT_MAX_PROCESSING_FAILURES;
    if (chunk.processingFailures >= max) {
      const error = `chunk failed after ${chunk.processingFailures} processing failures (max ${max}): ${options.processingFailure}`;
      failChunk(chunk, items, error, now);
      return { outcome: { status: 'failed', error } };
    }
  }
  const requeued = unfinished > 0;
  const availableAt = requeued
    ? now + (options.processingFailure === undefined ? 0 : (options.requeueDelayMs ?? 0))
    : Math.min(...waiting.map((item) => item.retryAt ?? now));
  const message = reopen(chunk, availableAt, requeued ? 'requeue' : 'retry', now);
  return {
    outcome: { status: requeued ? 'requeued' : 'waiting', availableAt, messageId: message.id },
    message,
  };
}

/** F8: recover one chunk whose lease expired (its items in index order). Changes the rows. */
export function decideRecovery(
  chunk: ChunkRecord,
  items: readonly ItemRecord[],
  now: number,
  recoveryLimit = DEFAULT_RECOVERY_LIMIT,
): { recovered: RecoveredChunk; message?: OutboxMessage } {
  let staleAttempts = 0;
  for (const item of items) {
    if (item.status !== 'running') continue;
    returnAttempt(item);
    staleAttempts += 1;
  }
  const ref = { fanOutId: chunk.fanOutId, shard: chunk.shard, chunkId: chunk.chunkId, staleAttempts };
  clearLease(chunk);
  const open = items.filter((item) => item.status === 'pending' || item.status === 'retry_scheduled');
  if (open.length === 0) {
    chunk.status = 'done';
    return { recovered: { ...ref, outcome: 'done' } };
  }
  if (chunk.recoveries >= recoveryLimit) {
    const error = `chunk failed: its lease expired ${chunk.recoveries + 1} times (recovery limit ${recoveryLimit})`;
    failChunk(chunk, items, error, now);
    return { recovered: { ...ref, outcome: 'failed' } };
  }
  chunk.recoveries += 1;
  const availableAt = open.some((item) => item.status === 'pending')
    ? now
    : Math.min(...open.map((item) => item.retryAt ?? now));
  const message = reopen(chunk, availableAt, 'recovery', now);
  return { recovered: { ...ref, outcome: 'requeued', messageId: message.id }, message };
}

/** The chunk-ready messages of a placement's chunks `from` to `to` (made one at a time, as they are read). */
function* dispatchMessages(
  row: FanOutRecord,
  placement: Placement,
  position: number,
  from: number,
  to: number,
  now: number,
): Generator<OutboxMessage> {
  for (let k = from; k < to; k += 1) {
    const payload: ChunkReadyPayload = {
      fanOutId: row.fanOutId,
      shard: placement.shard,
      chunkId: chunkIdOnShard(k, row.shards.length, position),
      storeAlias: placement.shard,
      writeEpoch: placement.writeEpoch,
      reason: 'dispatch',
    };
    yield chunkReadyMessage(payload, now);
  }
}

/** Open the chunk again at `availableAt`; its next message. */
function reopen(
  chunk: ChunkRecord,
  availableAt: number,
  reason: ChunkReadyPayload['reason'],
  now: number,
): OutboxMessage {
  chunk.status = 'open';
  chunk.availableAt = availableAt;
  const payload: ChunkReadyPayload = {
    fanOutId: chunk.fanOutId,
    shard: chunk.shard,
    chunkId: chunk.chunkId,
    storeAlias: chunk.storeAlias,
    writeEpoch: chunk.writeEpoch,
    reason,
  };
  return chunkReadyMessage(payload, now, availableAt);
}

function startAttempt(item: ItemRecord, workerId: string, expiresAt: number): void {
  item.status = 'running';
  item.attempt += 1;
  item.attemptId = newId();
  item.workerId = workerId;
  item.attemptExpiresAt = expiresAt;
  item.retryAt = null;
}

/** An attempt that ended without a result: the item is pending again, its task budget unspent. */
function returnAttempt(item: ItemRecord): void {
  item.status = 'pending';
  item.attemptId = null;
  item.workerId = null;
  item.attemptExpiresAt = null;
}

function clearLease(chunk: ChunkRecord): void {
  chunk.leaseToken = null;
  chunk.workerId = null;
  chunk.leaseExpiresAt = null;
}

function failChunk(chunk: ChunkRecord, items: readonly ItemRecord[], error: string, now: number): void {
  chunk.status = 'failed';
  chunk.error = error;
  for (const item of items) {
    if (item.status === 'succeeded' || item.status === 'failed') continue;
    returnAttempt(item);
    Object.assign(item, { status: 'failed', error, retryAt: null, finishedAt: now });
  }
}

/** Why `result` may not be written to `item` (F4), or undefined when it may. */
function staleReason(
  item: ItemRecord | undefined,
  chunk: ChunkRecord,
  workerId: string,
  result: ItemResult,
  now: number,
): string | undefined {
  if (item === undefined || item.chunkId !== chunk.chunkId || item.shard !== chunk.shard)
    return 'the item is not in this chunk';
  if (item.status !== 'running') return `the item is ${item.status}, not running`;
  if (item.attemptId !== result.attemptId || item.attempt !== result.attempt)
    return `attempt ${result.attempt} (${result.attemptId}) is not the current attempt ${item.attempt}`;
  if (item.workerId !== workerId) return `worker "${workerId}" does not hold the attempt`;
  if ((item.attemptExpiresAt ?? 0) <= now) return 'the attempt lease expired';
  return undefined;
}

/** Write one accepted result; says what it became. */
function applyResult(
  item: ItemRecord,
  result: ItemResult,
  maxAttempts: number,
  now: number,
): keyof RecordedResults {
  item.attemptExpiresAt = null;
  if (result.status === 'succeeded') {
    Object.assign(item, { status: 'succeeded', output: result.output, error: null, finishedAt: now });
    return 'succeeded';
  }
  item.failures += 1;
  item.error = result.error;
  if (result.retryAt !== null && item.failures < maxAttempts) {
    Object.assign(item, { status: 'retry_scheduled', retryAt: result.retryAt });
    return 'retryScheduled';
  }
  Object.assign(item, { status: 'failed', retryAt: null, finishedAt: now });
  return 'failed';
}
