/**
 * A deliberately broken event store: a write to a taken seq succeeds (L1). The losing
 * batch is kept beside the log and read back with it, so the log holds two events at one
 * seq. The conformance suites must reject it.
 */
import { DuplicateSequenceError } from '@skein/workflow-runtime';
import {
  type AppendRequest,
  type AppendResult,
  MemoryEventStore,
  type StoredEvent,
} from '@skein/workflow-runtime/spi';

/** The memory store, except that a duplicate seq is accepted and kept. */
export class DuplicateSeqEventStore extends MemoryEventStore {
  private readonly duplicates: StoredEvent[] = [];

  override async append(request: AppendRequest): Promise<AppendResult> {
    try {
      return await super.append(request);
    } catch (error) {
      // ExecutionAlreadyExistsError (seq 0) extends DuplicateSequenceError; keep L2 intact.
      if (!(error instanceof DuplicateSequenceError) || request.expectedSeq === 0) throw error;
      const { executionId, expectedSeq, fence } = request;
      request.events.forEach((event, i) => {
        this.duplicates.push({ ...event, executionId, seq: expectedSeq + i, fence });
      });
      const head = await this.getExecution(executionId);
      return { lastSeq: expectedSeq + request.events.length - 1, status: head!.status };
    }
  }

  override async read(
    executionId: string,
    fromSeq = 0,
    limit = Number.POSITIVE_INFINITY,
  ): Promise<StoredEvent[]> {
    const extra = this.duplicates.filter(
      (event) => event.executionId === executionId && event.seq >= fromSeq,
    );
    const merged = [...(await super.read(executionId, fromSeq)), ...extra].sort((a, b) => a.seq - b.seq);
    return merged.slice(0, limit);
  }
}
