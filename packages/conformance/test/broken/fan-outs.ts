/**
 * Deliberately broken fan-out tables. `NoAttemptGuardFanOuts` accepts a result from any
 * attempt of any worker (F4 broken: a stale worker overwrites the current attempt).
 * `UnseededDispatchFanOuts` dispatches before every chunk is seeded (F1 broken: chunk-ready
 * messages exist for a plan that is not durable yet). `ReleaseBeforeResultsFanOuts` releases
 * a chunk before it writes the release's last results, and drops a refused batch (F4/F5
 * broken: results lost, a stale release not refused). The fan-out suite must reject all three.
 */
import {
  type ChunkClaimRef,
  type DispatchOptions,
  type ItemResult,
  MemoryFanOutStore,
  type RecordedResults,
  type ReleaseChunkOptions,
  type ReleaseOutcome,
} from '@skein/workflow-runtime/spi';

/** The memory fan-out tables, except that results are written under whatever attempt is current. */
export class NoAttemptGuardFanOuts extends MemoryFanOutStore {
  override async recordResults(
    ref: ChunkClaimRef,
    results: readonly ItemResult[],
    now: number,
  ): Promise<RecordedResults> {
    const chunk = await this.chunk(ref.fanOutId, ref.shard, ref.chunkId);
    const current = new Map((await this.items(ref.fanOutId, { limit: 1_000_000 })).map((i) => [i.index, i]));
    const asCurrent = results.map((result) => {
      const item = current.get(result.index);
      return {
        ...result,
        attemptId: item?.attemptId ?? result.attemptId,
        attempt: item?.attempt ?? result.attempt,
      };
    });
    const liveRef = {
      ...ref,
      workerId: chunk?.workerId ?? ref.workerId,
      leaseToken: chunk?.leaseToken ?? ref.leaseToken,
    };
    return super.recordResults(liveRef, asCurrent, Math.min(now, (chunk?.leaseExpiresAt ?? now + 1) - 1));
  }
}

/** The memory fan-out tables, except that dispatch moves the creation cursor to the end first. */
export class UnseededDispatchFanOuts extends MemoryFanOutStore {
  override async dispatch(fanOutId: string, token: string, options: DispatchOptions): Promise<boolean> {
    const row = await this.get(fanOutId);
    if (row !== null) {
      await this.recordSeeded(fanOutId, token, Math.ceil(options.total / row.chunkSize), options.total);
    }
    return super.dispatch(fanOutId, token, options);
  }
}

/** The memory fan-out tables, except that a release writes its last results after it released (refusals dropped). */
export class ReleaseBeforeResultsFanOuts extends MemoryFanOutStore {
  override async releaseChunk(ref: ChunkClaimRef, options: ReleaseChunkOptions): Promise<ReleaseOutcome> {
    const { results = [], ...rest } = options;
    const outcome = await super.releaseChunk(ref, rest);
    await this.recordResults(ref, results, options.now).catch(() => undefined);
    return outcome;
  }
}
