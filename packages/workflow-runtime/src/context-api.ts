/** The `ctx` a workflow body receives. Every call is recorded and replayed by position. */
import type { RetryPolicy } from './retry.js';

/** What a step function receives. */
export interface StepInfo {
  /** 1 for the first attempt. */
  attempt: number;
  /** Aborted when the attempt passes its `timeoutMs`. */
  signal: AbortSignal;
  executionId: string;
}

/** Options of {@link WorkflowContext.step}. */
export interface StepOptions {
  /** Retry policy (default: one attempt, no retry). */
  retry?: RetryPolicy;
  /** An attempt that runs longer fails with `StepTimeoutError` (default: no limit). */
  timeoutMs?: number;
}

/** The workflow's view of its execution. */
export interface WorkflowContext {
  /** Id of this execution. */
  readonly executionId: string;
  /** Version this execution is pinned to. */
  readonly version: number;
  /**
   * Run a side effect once. Its result is recorded before the workflow moves on; on replay
   * the recorded result is returned without running `fn` again. Only an attempt in flight
   * when the process died runs a second time.
   */
  step<T>(name: string, fn: (info: StepInfo) => T | Promise<T>, options?: StepOptions): Promise<T>;
  /** Durable sleep: the execution suspends and holds no worker until the timer fires. */
  sleep(name: string, ms: number): Promise<void>;
  /** Durable sleep until a point in time. */
  sleepUntil(name: string, until: Date | number): Promise<void>;
  /** The current time, recorded: replay sees the same value. */
  now(): Date;
  /** `Math.random()`, recorded. */
  random(): number;
  /** A random UUID, recorded. */
  uuid(): string;
  /**
   * True when this execution runs the code after the change named `id`: always for
   * executions that reach this point on new code, never for executions that already passed
   * it on old code.
   */
  patched(id: string): boolean;
}
