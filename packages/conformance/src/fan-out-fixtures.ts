/** What the fan-out cases share: the stores under test, a plan, and seeding a whole plan. */
import type { FanOutStore, OutboxStore } from '@skein/workflow-runtime';
import {
  type ChunkClaim,
  type ChunkClaimRef,
  type ChunkReadyPayload,
  FANOUT_CHUNK_READY_TOPIC,
  type FanOutPlan,
  INITIAL_WRITE_EPOCH,
  type ItemResult,
} from '@skein/workflow-runtime/spi';
import { expect } from 'vitest';

/** The stores a fan-out case needs: the fan-out tables and the outbox they write to. */
export interface FanOutStores {
  fanOuts: FanOutStore;
  outbox: OutboxStore;
  close(): void | Promise<void>;
}

/** Options of {@link fanOutStoreSuite}. */
export interface FanOutStoreSuiteOptions {
  /** Names the implementation in test titles. */
  name: string;
  /** Fresh, empty stores; each case closes what it opened. */
  open: () => FanOutStores | Promise<FanOutStores>;
}

/** A plan of fan-out `fanOutId`: chunks of 3, one shard, 2 attempts per item. */
export function planOf(fanOutId: string, overrides: Partial<FanOutPlan> = {}): FanOutPlan {
  return {
    fanOutId,
    executionId: `exec-${fanOutId}`,
    name: 'cases',
    task: 'score',
    taskVersion: 1,
    chunkSize: 3,
    shards: ['main'],
    required: true,
    maxAttempts: 2,
    ...overrides,
  };
}

/** `count` encoded inputs, `{"i":0}` … */
export function inputsOf(count: number, from = 0): string[] {
  return Array.from({ length: count }, (_, i) => JSON.stringify({ i: from + i }));
}

/** A creation lease request of `owner` at `now` for 1 s. */
export const leaseOf = (owner: string, now = 1_000, ttlMs = 1_000) => ({ owner, now, ttlMs });

/**
 * Create `plan`, seed all of `total` items chunk by chunk onto their shards (all in `fanOuts`),
 * advance the cursor after each, and dispatch at `now`. Returns the creation token.
 */
export async function createAndDispatch(
  fanOuts: FanOutStore,
  plan: FanOutPlan,
  total: number,
  now = 1_000,
  window?: number,
): Promise<string> {
  const created = await fanOuts.create(plan, leaseOf('creator', now, 60_000));
  expect(created.outcome).toBe('created');
  const token = created.token!;
  await seedRange(fanOuts, plan, token, 0, Math.ceil(total / plan.chunkSize), total, now);
  const options = window === undefined ? { total, now } : { total, now, window };
  expect(await fanOuts.dispatch(plan.fanOutId, token, options)).toBe(true);
  return token;
}

/** Seed chunks `from … to - 1` of a plan of `total` items and advance the cursor past each. */
export async function seedRange(
  fanOuts: FanOutStore,
  plan: FanOutPlan,
  token: string,
  from: number,
  to: number,
  total: number,
  now = 1_000,
): Promise<void> {
  for (let chunkId = from; chunkId < to; chunkId += 1) {
    const firstIndex = chunkId * plan.chunkSize;
    const size = Math.min(plan.chunkSize, total - firstIndex);
    const shard = plan.shards[chunkId % plan.shards.length]!;
    const outcome = await fanOuts.seedChunk({
      fanOutId: plan.fanOutId,
      shard,
      chunkId,
      storeAlias: shard,
      firstIndex,
      inputs: inputsOf(size, firstIndex),
      writeEpoch: INITIAL_WRITE_EPOCH,
      maxAttempts: plan.maxAttempts,
      now,
    });
    expect(outcome).not.toBe('mismatch');
    expect(await fanOuts.recordSeeded(plan.fanOutId, token, chunkId + 1, firstIndex + size)).toBe(true);
  }
}

/** Claim chunk `chunkId` of shard `shard` as `workerId` at `now` (lease 1 s); fails the case when refused. */
export async function claimOf(
  fanOuts: FanOutStore,
  fanOutId: string,
  chunkId: number,
  workerId: string,
  now: number,
  shard = 'main',
  leaseMs = 1_000,
): Promise<ChunkClaim> {
  const result = await fanOuts.claimChunk({
    fanOutId,
    shard,
    chunkId,
    writeEpoch: INITIAL_WRITE_EPOCH,
    workerId,
    now,
    leaseMs,
  });
  if (!result.claimed) throw new Error(`claim of chunk ${chunkId} refused: ${result.reason}`);
  return result.claim;
}

/** The claim's reference (what later calls name it by). */
export function refOf(claim: ChunkClaim): ChunkClaimRef {
  return {
    fanOutId: claim.fanOutId,
    shard: claim.shard,
    chunkId: claim.chunkId,
    workerId: claim.workerId,
    leaseToken: claim.leaseToken,
  };
}

/** A success for every item the claim started, its output naming the worker. */
export function successes(claim: ChunkClaim): ItemResult[] {
  return claim.items.map((item) => ({
    index: item.index,
    attemptId: item.attemptId,
    attempt: item.attempt,
    status: 'succeeded' as const,
    output: JSON.stringify({ index: item.index, by: claim.workerId }),
  }));
}

/** The chunk-ready payloads in the outbox, oldest message first. */
export async function chunkMessages(
  outbox: OutboxStore,
): Promise<(ChunkReadyPayload & { id: string; availableAt: number })[]> {
  const deliveries = await outbox.list({ limit: 10_000 });
  return deliveries
    .filter((delivery) => delivery.topic.startsWith(`${FANOUT_CHUNK_READY_TOPIC}.`))
    .map((delivery) => ({
      ...(JSON.parse(delivery.payload) as ChunkReadyPayload),
      id: delivery.id,
      availableAt: delivery.availableAt,
    }));
}
