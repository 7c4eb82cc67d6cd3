/** A circuit breaker for dispatch: opens after N consecutive failures, half-open after a cool-down. */
import { CircuitOpenError } from '@skein/worker-runtime';
import { durationMsSchema, parseWith } from '@skein/workflow-runtime/internal';
import { z } from 'zod';

/** Options of {@link CircuitBreaker}. */
export interface CircuitOptions {
  /** Consecutive failures that open the circuit (default: 5). */
  failureThreshold?: number;
  /** How long the circuit stays open before one trial call is let through (default: 30 000 ms). */
  coolDownMs?: number;
  /** Milliseconds since the epoch (default: `Date.now`). Tests inject a clock. */
  clock?: () => number;
}

const circuitOptionsSchema = z.object({
  failureThreshold: z.number().int().min(1).optional(),
  coolDownMs: durationMsSchema.optional(),
  clock: z.custom<() => number>((value) => typeof value === 'function', 'must be a function').optional(),
});

/** `closed`: calls pass; `open`: calls are refused; `half-open`: one trial call passes. */
export type CircuitState = 'closed' | 'open' | 'half-open';

/** Counts consecutive failures and refuses calls while open. */
export class CircuitBreaker {
  private readonly threshold: number;
  private readonly coolDownMs: number;
  private readonly clock: () => number;
  private failures = 0;
  private openedAt = 0;
  private current: CircuitState = 'closed';
  private trialInFlight = false;

  constructor(options: CircuitOptions = {}) {
    const checked = parseWith(circuitOptionsSchema, options, 'circuit breaker options', 'circuit');
    this.threshold = checked.failureThreshold ?? 5;
    this.coolDownMs = checked.coolDownMs ?? 30_000;
    this.clock = options.clock ?? Date.now;
  }

  /** The state now (an open circuit past its cool-down reads `half-open`). */
  get state(): CircuitState {
    if (this.current === 'open' && this.clock() - this.openedAt >= this.coolDownMs) return 'half-open';
    return this.current;
  }

  /** Consecutive failures counted so far. */
  get consecutiveFailures(): number {
    return this.failures;
  }

  /** Let a call through or throw `CircuitOpenError`; in half-open, only one trial at a time. */
  admit(executionId: string): void {
    const state = this.state;
    if (state === 'closed') return;
    if (state === 'half-open' && !this.trialInFlight) {
      this.current = 'half-open';
      this.trialInFlight = true;
      return;
    }
    throw new CircuitOpenError(executionId, this.openedAt + this.coolDownMs, this.failures);
  }

  /** A call succeeded: close the circuit. */
  success(): void {
    this.failures = 0;
    this.trialInFlight = false;
    this.current = 'closed';
  }

  /** A call failed: count it; open at the threshold, or again at once after a failed trial. */
  failure(): void {
    this.failures += 1;
    const trial = this.trialInFlight;
    this.trialInFlight = false;
    if (trial || this.failures >= this.threshold) {
      this.current = 'open';
      this.openedAt = this.clock();
    }
  }

  /** A call ended without saying anything about health (a superseded refusal): not counted. */
  neutral(): void {
    this.trialInFlight = false;
  }
}
