/**
 * Deliberately broken queue stores: one holds `concurrency` per owner instead of across owners
 * (a limit per process), one ignores partition keys (no round-robin, no per-key limit). The
 * queue-store suite must reject both.
 */
import {
  type ClaimQueueOptions,
  MemoryQueueStore,
  type QueueEnqueueResult,
  type QueueItem,
} from '@skein/workflow-runtime/spi';

/** The memory store, except that `concurrency` only counts the claimer's own slots. */
export class PerOwnerLimitQueueStore extends MemoryQueueStore {
  override claim(options: ClaimQueueOptions): Promise<QueueItem[]> {
    const { concurrency, ...limits } = options.limits;
    const workerConcurrency = Math.min(concurrency ?? Infinity, limits.workerConcurrency ?? Infinity);
    return super.claim({
      ...options,
      limits: Number.isFinite(workerConcurrency) ? { ...limits, workerConcurrency } : limits,
    });
  }
}

/** The memory store, except that every item lands in one partition. */
export class NoPartitionsQueueStore extends MemoryQueueStore {
  override enqueue(item: QueueItem): Promise<QueueEnqueueResult> {
    return super.enqueue({ ...item, partitionKey: '' });
  }
}
