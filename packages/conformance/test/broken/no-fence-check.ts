/**
 * A deliberately broken event store: it skips the fence check (L3). A stale writer's append
 * is written as if it held the newest fence. The conformance suites must reject it.
 */
import { type AppendRequest, type AppendResult, MemoryEventStore } from '@skein/workflow-runtime/spi';

/** The memory store, except that an append under a stale fence is accepted. */
export class NoFenceCheckEventStore extends MemoryEventStore {
  override async append(request: AppendRequest): Promise<AppendResult> {
    const current = await this.currentFence(request.executionId);
    return super.append({ ...request, fence: Math.max(request.fence, current) });
  }
}
