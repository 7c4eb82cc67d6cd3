/**
 * A step attempt's abort signal, made only when its function asks for it: an `AbortController`
 * costs a few µs and most step functions never look at `info.signal`, so the step path makes
 * none unless the function reads it (or the step has a timeout). Aborting before the signal
 * exists is remembered, so a signal asked for later is already aborted, with the same reason.
 */
export class StepAbort {
  private controller: AbortController | undefined;
  private aborted = false;
  private reason: unknown;

  /** The attempt's signal, created on first use. */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  /** Abort the attempt (the first reason wins, as with `AbortController`). */
  abort(reason?: unknown): void {
    if (this.controller !== undefined) {
      this.controller.abort(reason);
      return;
    }
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
  }
}
