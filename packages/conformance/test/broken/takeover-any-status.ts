/**
 * A deliberately broken event store: its `takeOverPending` takes a fence for every execution it
 * is given, pending or not, so a claim fences out the node already running one. The
 * conformance suites must reject it.
 */
import { MemoryEventStore, type PendingTakeover } from '@skein/workflow-runtime/spi';

/** The memory store, except that a takeover skips the status check. */
export class TakeoverAnyStatusEventStore extends MemoryEventStore {
  override async takeOverPending(executionIds: readonly string[]): Promise<PendingTakeover[]> {
    const taken: PendingTakeover[] = [];
    for (const executionId of new Set(executionIds)) {
      if ((await this.getExecution(executionId)) === null) continue;
      const fence = await this.acquireFence(executionId);
      taken.push({ executionId, fence, events: await this.read(executionId) });
    }
    return taken;
  }
}
