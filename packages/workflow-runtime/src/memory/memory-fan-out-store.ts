/** In-memory {@link FanOutStore}: the reference implementation, for tests and examples. */
import { FanOutNotSeededError, FanOutStaleAttemptError } from '../errors.js';
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
  checkChunkSeed,
  checkClaimChunk,
  checkFanOutPlan,
  checkItemResults,
  chunkCount,
  chunkIdOnShard,
  chunkReadyMessage,
  chunksOnShard,
  DEFAULT_ITEMS_LIMIT,
  DEFAULT_MAX_PROCESSING_FAILURES,
  DEFAULT_RECOVERY_LIMIT,
  type DispatchOptions,
  emptyCounts,
  type FanOutCounts,
  type FanOutPlan,
  type FanOutRecord,
  type FanOutStore,
  type ItemRecord,
  type ItemResult,
  type Placement,
  planMismatch,
  type RecordedResults,
  type RecoverExpiredOptions,
  type RecoveredChunk,
  type ReleaseChunkOptions,
  type ReleaseOutcome,
  type SeedOutcome,
} from '../fan-out-store.js';
import { newId } from '../ids.js';
import type { OutboxMessage } from '../outbox.js';
import type { MemoryOutboxStore } from './memory-outbox-store.js';

/** The write epoch of every placement when a fan-out is dispatched. */
export const INITIAL_WRITE_EPOCH = 1;

/**
 * The fan-out tables held in memory. Every call runs without an await between its checks and
 * its writes, so each is one atomic step, as a transaction is in the SQL stores.
 */
export class MemoryFanOutStore implements FanOutStore {
  private readonly fanOuts = new Map<string, FanOutRecord>();
  private readonly ledger = new Map<string, Placement[]>();
  private readonly chunks = new Map<string, ChunkRecord>();
  private readonly itemRows = new Map<string, Map<number, ItemRecord>>();

  /** @param outbox where chunk-ready messages are written, with the change that causes them. */
  constructor(private readonly outbox: MemoryOutboxStore) {}

  async create(plan: FanOutPlan, lease: CreationLeaseRequest): Promise<CreateFanOutResult> {
    checkFanOutPlan(plan, lease);
    const row = this.fanOuts.get(plan.fanOutId);
    if (row === undefined) {
      const created = newFanOut(plan, lease);
      this.fanOuts.set(plan.fanOutId, created);
      return { outcome: 'created', fanOut: { ...created }, token: created.creationToken };
    }
    const mismatch = planMismatch(row, plan);
    if (mismatch !== undefined) {
      if (row.status === 'creating') endFanOut(row, 'failed', lease.now, `plan mismatch: ${mismatch}`);
      return { outcome: 'mismatch', fanOut: { ...row }, token: null, mismatch };
    }
    if (row.status !== 'creating') return { outcome: 'done', fanOut: { ...row }, token: null };
    const live = row.creationExpiresAt !== null && row.creationExpiresAt > lease.now;
    if (live && row.creationOwner !== lease.owner)
      return { outcome: 'held', fanOut: { ...row }, token: null };
    row.creationToken = newId();
    row.creationOwner = lease.owner;
    row.creationExpiresAt = lease.now + lease.ttlMs;
    return { outcome: 'claimed', fanOut: { ...row }, token: row.creationToken };
  }

  async renewCreation(fanOutId: string, token: string, now: number, ttlMs: number): Promise<boolean> {
    const row = this.creating(fanOutId, token);
    if (row === undefined || (row.creationExpiresAt ?? 0) <= now) return false;
    row.creationExpiresAt = now + ttlMs;
    return true;
  }

  async recordSeeded(fanOutId: string, token: string, chunks: number, items: number): Promise<boolean> {
    const row = this.creating(fanOutId, token);
    if (row === undefined) return false;
    if (chunks > row.seededChunks) {
      row.seededChunks = chunks;
      row.seededItems = items;
    }
    return true;
  }

  async seedChunk(seed: ChunkSeed): Promise<SeedOutcome> {
    checkChunkSeed(seed);
    const key = chunkKey(seed.fanOutId, seed.shard, seed.chunkId);
    const existing = this.chunks.get(key);
    if (existing !== undefined) return this.sameSeed(existing, seed) ? 'exists' : 'mismatch';
    this.chunks.set(key, newChunk(seed));
    const items = this.itemRows.get(seed.fanOutId) ?? new Map<number, ItemRecord>();
    this.itemRows.set(seed.fanOutId, items);
    seed.inputs.forEach((input, i) => {
      const index = seed.firstIndex + i;
      items.set(index, newItem(seed, index, input));
    });
    return 'seeded';
  }

  async dispatch(fanOutId: string, token: string, options: DispatchOptions): Promise<boolean> {
    const row = this.creating(fanOutId, token);
    if (row === undefined) return false;
    const chunks = chunkCount(options.total, row.chunkSize);
    if (row.seededChunks !== chunks || row.seededItems !== options.total)
      throw new FanOutNotSeededError(fanOutId, row.seededChunks, chunks, row.seededItems, options.total);
    const window = options.window ?? Number.POSITIVE_INFINITY;
    const messages: OutboxMessage[] = [];
    const placements = row.shards.map((shard, position) => {
      const onShard = chunksOnShard(chunks, row.shards.length, position);
      const placement: Placement = {
        fanOutId,
        shard,
        chunks: onShard,
        writeEpoch: INITIAL_WRITE_EPOCH,
        dispatched: Math.min(window, onShard),
      };
      for (let k = 0; k < placement.dispatched; k += 1)
        messages.push(
          dispatchMessage(row, placement, chunkIdOnShard(k, row.shards.length, position), options.now),
        );
      return placement;
    });
    this.ledger.set(fanOutId, placements);
    row.total = options.total;
    row.status = 'dispatched';
    row.dispatchedAt = options.now;
    clearCreation(row);
    this.outbox.insert(messages);
    return true;
  }

  async advanceDispatch(
    fanOutId: string,
    shard: string,
    from: number,
    count: number,
    now: number,
  ): Promise<boolean> {
    const row = this.fanOuts.get(fanOutId);
    const position = row?.shards.indexOf(shard) ?? -1;
    const placement = this.ledger.get(fanOutId)?.[position];
    if (row?.status !== 'dispatched' || placement === undefined || placement.dispatched !== from)
      return false;
    const to = Math.min(from + count, placement.chunks);
    const messages: OutboxMessage[] = [];
    for (let k = from; k < to; k += 1)
      messages.push(dispatchMessage(row, placement, chunkIdOnShard(k, row.shards.length, position), now));
    placement.dispatched = to;
    this.outbox.insert(messages);
    return true;
  }

  async fail(fanOutId: string, reason: string, now: number): Promise<boolean> {
    const row = this.fanOuts.get(fanOutId);
    if (row === undefined || row.status === 'settled' || row.status === 'failed') return false;
    endFanOut(row, 'failed', now, reason);
    return true;
  }

  async settle(fanOutId: string, summary: string, now: number): Promise<boolean> {
    const row = this.fanOuts.get(fanOutId);
    if (row?.status !== 'dispatched') return false;
    endFanOut(row, 'settled', now, null);
    row.summary = summary;
    return true;
  }

  async get(fanOutId: string): Promise<FanOutRecord | null> {
    const row = this.fanOuts.get(fanOutId);
    return row === undefined ? null : { ...row, shards: [...row.shards] };
  }

  async placements(fanOutId: string): Promise<Placement[]> {
    return (this.ledger.get(fanOutId) ?? []).map((placement) => ({ ...placement }));
  }

  async claimChunk(request: ClaimChunkRequest): Promise<ClaimChunkResult> {
    checkClaimChunk(request);
    const { now } = request;
    const chunk = this.chunks.get(chunkKey(request.fanOutId, request.shard, request.chunkId));
    if (chunk === undefined) return { claimed: false, reason: 'unknown', chunk: null };
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
      ...claimRefOf(chunk),
      writeEpoch: chunk.writeEpoch,
      leaseExpiresAt,
      items: [],
      waiting: 0,
    };
    for (const item of this.itemsOf(chunk)) {
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

  async renewChunk(ref: ChunkClaimRef, now: number, leaseMs: number): Promise<boolean> {
    const chunk = this.held(ref, now);
    if (chunk === undefined) return false;
    chunk.leaseExpiresAt = now + leaseMs;
    for (const item of this.itemsOf(chunk))
      if (item.status === 'running' && item.workerId === ref.workerId) item.attemptExpiresAt = now + leaseMs;
    return true;
  }

  async recordResults(
    ref: ChunkClaimRef,
    results: readonly ItemResult[],
    now: number,
  ): Promise<RecordedResults> {
    checkItemResults(ref, results);
    const chunk = this.held(ref, now);
    const first = results[0];
    if (first === undefined) return { succeeded: 0, failed: 0, retryScheduled: 0 };
    if (chunk === undefined)
      throw new FanOutStaleAttemptError(
        ref.fanOutId,
        ref.chunkId,
        first.index,
        'the chunk lease is not held',
      );
    const rows = results.map((result) => {
      const item = this.itemRows.get(ref.fanOutId)?.get(result.index);
      const reason = staleReason(item, chunk, ref.workerId, result, now);
      if (reason !== undefined)
        throw new FanOutStaleAttemptError(ref.fanOutId, ref.chunkId, result.index, reason);
      return item!;
    });
    const recorded: RecordedResults = { succeeded: 0, failed: 0, retryScheduled: 0 };
    results.forEach((result, i) => {
      const outcome = applyResult(rows[i]!, result, chunk.maxAttempts, now);
      recorded[outcome] += 1;
    });
    return recorded;
  }

  async releaseChunk(ref: ChunkClaimRef, options: ReleaseChunkOptions): Promise<ReleaseOutcome> {
    const chunk = this.chunks.get(chunkKey(ref.fanOutId, ref.shard, ref.chunkId));
    if (chunk?.status !== 'leased' || chunk.leaseToken !== ref.leaseToken || chunk.workerId !== ref.workerId)
      return { status: 'lost' };
    const items = this.itemsOf(chunk);
    for (const item of items) if (item.status === 'running') returnAttempt(item);
    const unfinished = items.filter((item) => item.status === 'pending').length;
    const waiting = items.filter((item) => item.status === 'retry_scheduled');
    clearLease(chunk);
    if (unfinished === 0 && waiting.length === 0) {
      chunk.status = 'done';
      return { status: 'done' };
    }
    const { now } = options;
    if (options.processingFailure !== undefined) {
      chunk.processingFailures += 1;
      const max = options.maxProcessingFailures ?? DEFAULT_MAX_PROCESSING_FAILURES;
      if (chunk.processingFailures >= max) {
        const error = `chunk failed after ${chunk.processingFailures} processing failures (max ${max}): ${options.processingFailure}`;
        failChunk(chunk, items, error, now);
        return { status: 'failed', error };
      }
    }
    const requeued = unfinished > 0;
    const availableAt = requeued
      ? now + (options.processingFailure === undefined ? 0 : (options.requeueDelayMs ?? 0))
      : Math.min(...waiting.map((item) => item.retryAt ?? now));
    const messageId = this.reopen(chunk, availableAt, requeued ? 'requeue' : 'retry', now);
    return { status: requeued ? 'requeued' : 'waiting', availableAt, messageId };
  }

  async recoverExpired(options: RecoverExpiredOptions): Promise<RecoveredChunk[]> {
    const { now } = options;
    const limit = options.recoveryLimit ?? DEFAULT_RECOVERY_LIMIT;
    const expired = [...this.chunks.values()]
      .filter((chunk) => chunk.status === 'leased' && (chunk.leaseExpiresAt ?? 0) <= now)
      .sort((a, b) => (a.leaseExpiresAt ?? 0) - (b.leaseExpiresAt ?? 0))
      .slice(0, options.limit);
    return expired.map((chunk) => {
      const items = this.itemsOf(chunk);
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
        return { ...ref, outcome: 'done' };
      }
      if (chunk.recoveries >= limit) {
        failChunk(
          chunk,
          items,
          `chunk failed: its lease expired ${chunk.recoveries + 1} times (recovery limit ${limit})`,
          now,
        );
        return { ...ref, outcome: 'failed' };
      }
      chunk.recoveries += 1;
      const availableAt = open.some((item) => item.status === 'pending')
        ? now
        : Math.min(...open.map((item) => item.retryAt ?? now));
      return { ...ref, outcome: 'requeued', messageId: this.reopen(chunk, availableAt, 'recovery', now) };
    });
  }

  async chunk(fanOutId: string, shard: string, chunkId: number): Promise<ChunkRecord | null> {
    const chunk = this.chunks.get(chunkKey(fanOutId, shard, chunkId));
    return chunk === undefined ? null : { ...chunk };
  }

  async items(fanOutId: string, query: { afterIndex?: number; limit?: number } = {}): Promise<ItemRecord[]> {
    const after = query.afterIndex ?? -1;
    return [...(this.itemRows.get(fanOutId)?.values() ?? [])]
      .filter((item) => item.index > after)
      .sort((a, b) => a.index - b.index)
      .slice(0, query.limit ?? DEFAULT_ITEMS_LIMIT)
      .map((item) => ({ ...item }));
  }

  async counts(fanOutId: string): Promise<FanOutCounts> {
    const counts = emptyCounts();
    for (const chunk of this.chunks.values())
      if (chunk.fanOutId === fanOutId) counts.chunks[chunk.status] += 1;
    for (const item of this.itemRows.get(fanOutId)?.values() ?? []) counts.items[item.status] += 1;
    return counts;
  }

  /** The fan-out `fanOutId` if it is creating under `token`. */
  private creating(fanOutId: string, token: string): FanOutRecord | undefined {
    const row = this.fanOuts.get(fanOutId);
    return row?.status === 'creating' && row.creationToken === token ? row : undefined;
  }

  /** The chunk of `ref` if `ref` holds its live lease at `now`. */
  private held(ref: ChunkClaimRef, now: number): ChunkRecord | undefined {
    const chunk = this.chunks.get(chunkKey(ref.fanOutId, ref.shard, ref.chunkId));
    const live =
      chunk?.status === 'leased' &&
      chunk.leaseToken === ref.leaseToken &&
      chunk.workerId === ref.workerId &&
      (chunk.leaseExpiresAt ?? 0) > now;
    return live ? chunk : undefined;
  }

  private itemsOf(chunk: ChunkRecord): ItemRecord[] {
    const rows = this.itemRows.get(chunk.fanOutId);
    const items: ItemRecord[] = [];
    for (let index = chunk.firstIndex; index < chunk.firstIndex + chunk.size; index += 1) {
      const item = rows?.get(index);
      if (item !== undefined) items.push(item);
    }
    return items;
  }

  private sameSeed(chunk: ChunkRecord, seed: ChunkSeed): boolean {
    if (chunk.firstIndex !== seed.firstIndex || chunk.size !== seed.inputs.length) return false;
    if (chunk.writeEpoch !== seed.writeEpoch || chunk.storeAlias !== seed.storeAlias) return false;
    return this.itemsOf(chunk).every((item, i) => item.input === seed.inputs[i]);
  }

  /** Open the chunk again at `availableAt` and write its next message; returns the message id. */
  private reopen(
    chunk: ChunkRecord,
    availableAt: number,
    reason: ChunkReadyPayload['reason'],
    now: number,
  ): string {
    chunk.status = 'open';
    chunk.availableAt = availableAt;
    const message = chunkReadyMessage(payloadOf(chunk, reason), now, availableAt);
    this.outbox.insert([message]);
    return message.id;
  }
}

function chunkKey(fanOutId: string, shard: string, chunkId: number): string {
  return `${fanOutId}\u0000${shard}\u0000${chunkId}`;
}

function newFanOut(plan: FanOutPlan, lease: CreationLeaseRequest): FanOutRecord {
  return {
    ...plan,
    shards: [...plan.shards],
    status: 'creating',
    total: null,
    seededChunks: 0,
    seededItems: 0,
    creationToken: newId(),
    creationOwner: lease.owner,
    creationExpiresAt: lease.now + lease.ttlMs,
    createdAt: lease.now,
    dispatchedAt: null,
    settledAt: null,
    error: null,
    summary: null,
  };
}

function newChunk(seed: ChunkSeed): ChunkRecord {
  return {
    fanOutId: seed.fanOutId,
    shard: seed.shard,
    chunkId: seed.chunkId,
    storeAlias: seed.storeAlias,
    firstIndex: seed.firstIndex,
    size: seed.inputs.length,
    writeEpoch: seed.writeEpoch,
    status: 'open',
    availableAt: seed.now,
    leaseToken: null,
    workerId: null,
    leaseExpiresAt: null,
    claims: 0,
    recoveries: 0,
    processingFailures: 0,
    maxAttempts: seed.maxAttempts,
    error: null,
  };
}

function newItem(seed: ChunkSeed, index: number, input: string): ItemRecord {
  return {
    fanOutId: seed.fanOutId,
    index,
    chunkId: seed.chunkId,
    shard: seed.shard,
    input,
    status: 'pending',
    attempt: 0,
    failures: 0,
    attemptId: null,
    workerId: null,
    attemptExpiresAt: null,
    retryAt: null,
    output: null,
    error: null,
    finishedAt: null,
  };
}

function clearCreation(row: FanOutRecord): void {
  row.creationToken = null;
  row.creationOwner = null;
  row.creationExpiresAt = null;
}

function endFanOut(row: FanOutRecord, status: 'failed' | 'settled', now: number, error: string | null): void {
  row.status = status;
  row.settledAt = now;
  row.error = error;
  clearCreation(row);
}

function claimRefOf(chunk: ChunkRecord): ChunkClaimRef {
  return {
    fanOutId: chunk.fanOutId,
    shard: chunk.shard,
    chunkId: chunk.chunkId,
    workerId: chunk.workerId!,
    leaseToken: chunk.leaseToken!,
  };
}

function payloadOf(chunk: ChunkRecord, reason: ChunkReadyPayload['reason']): ChunkReadyPayload {
  return {
    fanOutId: chunk.fanOutId,
    shard: chunk.shard,
    chunkId: chunk.chunkId,
    storeAlias: chunk.storeAlias,
    writeEpoch: chunk.writeEpoch,
    reason,
  };
}

function dispatchMessage(
  row: FanOutRecord,
  placement: Placement,
  chunkId: number,
  now: number,
): OutboxMessage {
  return chunkReadyMessage(
    {
      fanOutId: row.fanOutId,
      shard: placement.shard,
      chunkId,
      storeAlias: placement.shard,
      writeEpoch: placement.writeEpoch,
      reason: 'dispatch',
    },
    now,
  );
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
