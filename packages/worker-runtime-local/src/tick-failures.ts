/** Per-execution failures of supervisor tick work, for the dead-letter deadline. */

/** When an execution's tick work first failed, and the latest failure. */
export interface TickFailure {
  /** Milliseconds since the epoch of the first failure in the current run of failures. */
  since: number;
  /** Which tick work failed last, e.g. `recovery`. */
  phase: string;
  error: unknown;
}

/** Failures by execution id; a success clears the execution's entry. */
export class TickFailures {
  private readonly failures = new Map<string, TickFailure>();

  /** Record a failure of `phase` at `now`; the first failure's time is kept. */
  record(executionId: string, phase: string, error: unknown, now: number): void {
    const since = this.failures.get(executionId)?.since ?? now;
    this.failures.set(executionId, { since, phase, error });
  }

  /** The execution's work succeeded: its failures healed. */
  clear(executionId: string): void {
    this.failures.delete(executionId);
  }

  /** Executions failing for longer than `deadlineMs` at `now`. */
  overdue(now: number, deadlineMs: number): [string, TickFailure][] {
    return [...this.failures].filter(([, failure]) => now - failure.since > deadlineMs);
  }
}

/** The dead-letter reason: names the tick, the failing work, the bound and the last error. */
export function deadLetterReason(executionId: string, failure: TickFailure, deadlineMs: number): string {
  const last = failure.error instanceof Error ? failure.error.message : String(failure.error);
  return (
    `supervisor tick: ${failure.phase} of execution "${executionId}" kept failing for longer than ` +
    `tickFailureDeadlineMs (${deadlineMs} ms) since ${new Date(failure.since).toISOString()}; last error: ${last}`
  );
}
