/** A fan-out of one chunk of three items, created, dispatched and claimed: what a results write needs. */
import type { FanOutStore } from '@skein/workflow-runtime';
import { type ChunkClaim, type ChunkClaimRef, INITIAL_WRITE_EPOCH } from '@skein/workflow-runtime/spi';

/**
 * Create fan-out `fanOutId` of three items (`{"i":0}` … in one chunk of 3, one shard, 2 attempts
 * each), seed and dispatch it at 1 000, and claim its chunk as `workerId` at 2 000 (lease 10 s).
 */
export async function claimedChunkOfThree(
  fanOuts: FanOutStore,
  fanOutId: string,
  workerId: string,
): Promise<{ claim: ChunkClaim; ref: ChunkClaimRef }> {
  const plan = {
    fanOutId,
    executionId: `e-${fanOutId}`,
    name: 'cases',
    task: 'score',
    taskVersion: 1,
    chunkSize: 3,
    shards: ['main'],
    required: true,
    maxAttempts: 2,
  };
  const { token } = await fanOuts.create(plan, { owner: 'a', now: 1_000, ttlMs: 60_000 });
  const seed = {
    fanOutId,
    shard: 'main',
    chunkId: 0,
    storeAlias: 'main',
    firstIndex: 0,
    inputs: ['{"i":0}', '{"i":1}', '{"i":2}'],
    writeEpoch: INITIAL_WRITE_EPOCH,
    maxAttempts: 2,
    now: 1_000,
  };
  await fanOuts.seedChunks([seed], { fanOutId, token: token!, seededChunks: 1, seededItems: 3 });
  if (!(await fanOuts.dispatch(fanOutId, token!, { total: 3, now: 1_000 })))
    throw new Error(`fan-out ${fanOutId} was not dispatched`);
  const claimed = await fanOuts.claimChunk({
    fanOutId,
    shard: 'main',
    chunkId: 0,
    writeEpoch: INITIAL_WRITE_EPOCH,
    workerId,
    now: 2_000,
    leaseMs: 10_000,
  });
  if (!claimed.claimed) throw new Error(`claim refused: ${claimed.reason}`);
  const { claim } = claimed;
  return { claim, ref: { fanOutId, shard: 'main', chunkId: 0, workerId, leaseToken: claim.leaseToken } };
}
