/**
 * Deliberately broken fan-out tables. `NoAttemptGuardFanOuts` accepts a result from any
 * attempt of any worker (F4 broken: a stale worker overwrites the current attempt).
 * `UnseededDispatchFanOuts` dispatches before every chunk is seeded (F1 broken: chunk-ready
 * messages exist for a plan that is not durable yet). The fan-out suite must reject both.
 */
import {
  type ChunkClaimRef,
  type DispatchOptions,
  type ItemResult,
  MemoryFanOutStore,
  type RecordedResults,
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
