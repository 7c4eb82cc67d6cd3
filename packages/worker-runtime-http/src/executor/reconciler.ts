/**
 * Reconciliation (E4): each session's own worker that delivers retained results. The
 * heartbeat only asks it to run (`request`); it runs one pass at a time, at most
 * `maxPerPass` results, stopping after `passBudgetMs`; the session joins it (`close`) before
 * it ends. It delivers only results that may still be delivered (chosen, bound, not refused,
 * not being delivered by someone else), and never starts, re-runs or deletes a run: a row goes
 * only when the hub acknowledges it.
 */
import { type Delivered, type DeliveringSession, type DeliveryDeps, deliver } from './delivery.js';

/** Bounds of a pass. */
export interface PassBounds {
  /** Results a pass delivers at most (default: 32). */
  maxPerPass: number;
  /** A pass starts no delivery after this long, in ms (default: 5 000). */
  passBudgetMs: number;
}

/** What one pass did. */
export type PassReport = Record<Delivered, number> & { pass: number };

/** The reconciliation worker of one session. */
export class Reconciler {
  private requested = false;
  private closed = false;
  private wake: (() => void) | null = null;
  private passes = 0;
  private readonly done: Promise<void>;

  constructor(
    private readonly deps: DeliveryDeps,
    private readonly session: DeliveringSession,
    private readonly bounds: PassBounds,
  ) {
    this.done = this.loop();
  }

  /** Ask for a pass; returns at once (a pass already asked for is not asked twice). */
  request(): void {
    this.requested = true;
    this.wake?.();
  }

  /** Stop after the pass in progress, and wait for it. */
  async close(): Promise<void> {
    this.closed = true;
    this.wake?.();
    await this.done;
  }

  private async loop(): Promise<void> {
    while (!this.closed) {
      if (!this.requested) await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = null;
      if (this.closed) return;
      this.requested = false;
      try {
        await this.pass();
      } catch (error) {
        this.deps.logger.error('reconciliation pass failed', { ...this.session.binding, error });
      }
    }
  }

  private async pass(): Promise<void> {
    const started = Date.now();
    const rows = this.deps.store.deliverable(this.bounds.maxPerPass, this.deps.claims);
    if (rows.length === 0) return;
    const report: PassReport = {
      pass: ++this.passes,
      acknowledged: 0,
      refused: 0,
      stopped: 0,
      retained: 0,
      busy: 0,
    };
    for (const row of rows) {
      if (this.closed || !this.session.live || Date.now() - started > this.bounds.passBudgetMs) break;
      report[await deliver(this.deps, row, this.session)]++;
    }
    this.deps.logger.info('reconciliation pass', { ...this.session.binding, ...report });
  }
}
