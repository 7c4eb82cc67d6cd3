/**
 * New fan-out rows, and ending a fan-out row: what the rules of fan-out-rules.ts and the stores
 * write when a fan-out, a chunk or its items come to be, and when a fan-out ends.
 */
import type {
  ChunkRecord,
  ChunkSeed,
  CreationLeaseRequest,
  FanOutPlan,
  FanOutRecord,
  ItemRecord,
} from './fan-out-store.js';
import { newId } from './ids.js';

/** End a fan-out: failed (with why) or settled. */
export function endFanOut(
  row: FanOutRecord,
  status: 'failed' | 'settled',
  now: number,
  error: string | null,
): void {
  row.status = status;
  row.settledAt = now;
  row.error = error;
  clearCreation(row);
}

/** A new chunk row of `seed`, open from `seed.now`. */
export function newChunk(seed: ChunkSeed): ChunkRecord {
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

/** The new, pending item rows of `seed`, in index order. */
export function newItems(seed: ChunkSeed): ItemRecord[] {
  return seed.inputs.map((input, i) => ({
    fanOutId: seed.fanOutId,
    index: seed.firstIndex + i,
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
  }));
}

export function newFanOut(plan: FanOutPlan, lease: CreationLeaseRequest): FanOutRecord {
  return {
    fanOutId: plan.fanOutId,
    executionId: plan.executionId,
    name: plan.name,
    task: plan.task,
    taskVersion: plan.taskVersion,
    chunkSize: plan.chunkSize,
    shards: [...plan.shards],
    required: plan.required,
    maxAttempts: plan.maxAttempts,
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

export function clearCreation(row: FanOutRecord): void {
  row.creationToken = null;
  row.creationOwner = null;
  row.creationExpiresAt = null;
}
