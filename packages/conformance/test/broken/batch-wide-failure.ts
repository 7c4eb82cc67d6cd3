/**
 * A deliberately broken group-committing event store (L4): when one append of a batch
 * fails, every caller of that batch gets that error, even those whose appends were written.
 * The conformance suites must reject it.
 */
import {
  type AppendRequest,
  type AppendResult,
  GroupCommit,
  MemoryEventStore,
} from '@skein/workflow-runtime/spi';

/** The memory store behind a group commit whose flush throws the first error of the batch. */
export class BatchWideFailureEventStore extends MemoryEventStore {
  private readonly group = new GroupCommit<AppendRequest, AppendResult>(async (batch) => {
    const outcomes = [];
    for (const request of batch) {
      // The bug: the first failure escapes the flush, so GroupCommit fails the whole batch.
      outcomes.push({ ok: true as const, value: await super.append(request) });
    }
    return outcomes;
  });

  override append(request: AppendRequest): Promise<AppendResult> {
    return this.group.submit(request);
  }
}
