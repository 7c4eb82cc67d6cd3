/**
 * What the last append this process made, or its last read of the execution's summary, left
 * of each execution's head (its last seq and status), for a bounded number of executions.
 * The event store uses it to pick the short append statements; the statements check what
 * they rely on, so a stale hint costs a round trip, never correctness.
 */
import type { AppendResult } from '@skein/workflow-runtime/spi';

/** How many executions' hints an event store keeps (the least recently written go first). */
export const HEAD_HINTS = 10_000;

/** Hints by execution id; a Map keeps insertion order, so the first key is the oldest write. */
export class HeadHints {
  private readonly hints = new Map<string, AppendResult>();

  constructor(private readonly capacity = HEAD_HINTS) {}

  get(executionId: string): AppendResult | undefined {
    return this.hints.get(executionId);
  }

  /** Remember `head`, or forget the execution when it is undefined. */
  set(executionId: string, head: AppendResult | undefined): void {
    this.hints.delete(executionId);
    if (head === undefined) return;
    this.hints.set(executionId, head);
    if (this.hints.size > this.capacity) this.hints.delete(this.hints.keys().next().value!);
  }
}
