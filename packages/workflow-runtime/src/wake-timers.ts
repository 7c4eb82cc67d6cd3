/** In-process wake-ups for executions this runtime suspended: one timer per execution. */

// setTimeout cannot wait longer than 2^31 - 1 ms; longer waits re-arm.
const MAX_DELAY = 2 ** 31 - 1;

/** Calls `wake(executionId)` at the time set for it, until cleared. */
export class WakeTimers {
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();

  constructor(
    private readonly clock: () => number,
    private readonly wake: (executionId: string) => Promise<unknown>,
    private readonly onError: (error: unknown, context: string) => void,
  ) {}

  /** Wake `executionId` at `at` (ms since the epoch), replacing an earlier wake-up for it. */
  set(executionId: string, at: number): void {
    this.cancel(executionId);
    const delay = Math.max(0, at - this.clock());
    const timer = setTimeout(
      () => {
        this.timers.delete(executionId);
        // Re-arm a wait longer than setTimeout allows, and a timer that fired before the clock
        // reached `at` (setTimeout may run a millisecond early): a wake-up then would find
        // nothing due, and the execution would never be woken in-process.
        if (delay > MAX_DELAY || this.clock() < at) return this.set(executionId, at);
        this.wake(executionId).catch((error) => this.onError(error, `wake-up of execution "${executionId}"`));
      },
      Math.min(delay, MAX_DELAY),
    );
    this.timers.set(executionId, timer);
  }

  /** Forget the wake-up of one execution. */
  cancel(executionId: string): void {
    const timer = this.timers.get(executionId);
    if (timer !== undefined) clearTimeout(timer);
    this.timers.delete(executionId);
  }

  /** Forget every wake-up. */
  clear(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}
