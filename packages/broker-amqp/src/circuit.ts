/**
 * The broker circuit: one per transport, passed by consumer creation and quarantine
 * publishing. After `failureThreshold` consecutive failures it opens for a bounded,
 * exponentially growing backoff (`initialMs`, doubling, at most `maxMs`); then one trial call
 * passes, and a success closes it.
 */
import { BrokerCircuitOpenError } from './errors.js';

/** Options of {@link BrokerCircuit}. */
export interface BrokerCircuitOptions {
  /** Consecutive failures that open the circuit (default: 3). */
  failureThreshold?: number;
  /** First backoff when it opens (default: 500 ms). */
  initialMs?: number;
  /** Longest backoff (default: 30 000 ms). */
  maxMs?: number;
  /** Milliseconds since the epoch (default: `Date.now`). */
  clock?: () => number;
}

/** See the module comment. */
export class BrokerCircuit {
  private readonly threshold: number;
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly clock: () => number;
  private failures = 0;
  private openUntil = 0;
  private trial = false;

  constructor(options: BrokerCircuitOptions = {}) {
    this.threshold = options.failureThreshold ?? 3;
    this.initialMs = options.initialMs ?? 500;
    this.maxMs = options.maxMs ?? 30_000;
    this.clock = options.clock ?? Date.now;
  }

  /** The backoff after `failures` consecutive failures (0 below the threshold). */
  backoffMs(failures = this.failures): number {
    if (failures < this.threshold) return 0;
    return Math.min(this.maxMs, this.initialMs * 2 ** (failures - this.threshold));
  }

  /** When a call may next pass (ms since the epoch; now or earlier when closed). */
  get retryAt(): number {
    return this.openUntil;
  }

  /** Run `call` through the circuit: refused with `BrokerCircuitOpenError` while open. */
  async run<T>(operation: string, call: () => Promise<T>): Promise<T> {
    const now = this.clock();
    if (now < this.openUntil || this.trial)
      throw new BrokerCircuitOpenError(operation, this.openUntil, this.failures);
    const trial = this.failures >= this.threshold;
    if (trial) this.trial = true;
    try {
      const result = await call();
      this.failures = 0;
      this.openUntil = 0;
      return result;
    } catch (error) {
      this.failures += 1;
      const backoff = this.backoffMs();
      if (backoff > 0) this.openUntil = this.clock() + backoff;
      throw error;
    } finally {
      if (trial) this.trial = false;
    }
  }

  /** Wait until the circuit lets a call through (at once when closed). */
  async ready(): Promise<void> {
    const wait = this.openUntil - this.clock();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }
}
