/**
 * Errors of dispatch. Each has a stable `code`, its `name` set, structured fields, and the
 * original kept as `cause`; across a process boundary they travel as `{ code, message, executionId }`.
 */
import { SkeinError } from '@skein/workflow-runtime';

/** Stable codes of the errors of this package, by class (without the `Error` suffix). */
export const DispatchErrorCodes = {
  ExecutionSuperseded: 'EXECUTION_SUPERSEDED',
  DispatchTimeout: 'DISPATCH_TIMEOUT',
  DispatchFailed: 'DISPATCH_FAILED',
  CircuitOpen: 'CIRCUIT_OPEN',
} as const;

/** One of {@link DispatchErrorCodes}. */
export type DispatchErrorCode = (typeof DispatchErrorCodes)[keyof typeof DispatchErrorCodes];

/**
 * Another holder owns the execution (a superseded refusal, see `isSupersededRefusal`). Never
 * retried nor redispatched: a caller that needs the outcome awaits it by id
 * (`runtime.handle(executionId).result()`).
 */
export class ExecutionSupersededError extends SkeinError {
  constructor(
    readonly executionId: string,
    options?: { cause?: unknown },
  ) {
    super(
      DispatchErrorCodes.ExecutionSuperseded,
      `execution "${executionId}" is owned by another holder; await its outcome by id`,
      options,
    );
  }
}

/** A dispatch attempt did not settle within its deadline; it counts as a failed attempt. */
export class DispatchTimeoutError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly timeoutMs: number,
    readonly attempt: number,
  ) {
    super(
      DispatchErrorCodes.DispatchTimeout,
      `execution "${executionId}": attempt ${attempt} did not settle within ${timeoutMs} ms`,
    );
  }
}

/** Every attempt of a dispatch failed; `cause` is the last attempt's error. */
export class DispatchFailedError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly attempts: number,
    options?: { cause?: unknown },
  ) {
    const detail = options?.cause instanceof Error ? `: ${options.cause.message}` : '';
    super(
      DispatchErrorCodes.DispatchFailed,
      `execution "${executionId}": dispatch failed after ${attempts} attempt${attempts === 1 ? '' : 's'}${detail}`,
      options,
    );
  }
}

/** The circuit breaker is open: dispatches are refused until `retryAt` (ms since the epoch). */
export class CircuitOpenError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly retryAt: number,
    readonly failures: number,
  ) {
    super(
      DispatchErrorCodes.CircuitOpen,
      `execution "${executionId}": refused, the circuit is open after ${failures} consecutive failures` +
        ` (half-open at ${new Date(retryAt).toISOString()})`,
    );
  }
}
