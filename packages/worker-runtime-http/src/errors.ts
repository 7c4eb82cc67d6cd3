/**
 * Errors of the HTTP worker runtime: a stable `code`, `name` set, structured fields, the
 * original kept as `cause`. On the wire errors are plain data (`WireError`), never instances.
 */
import { SkeinError, type ValidationIssue } from '@skein/workflow-runtime';

/** Stable codes of the errors of this package, by class (without the `Error` suffix). */
export const HttpErrorCodes = {
  RemoteWorker: 'REMOTE_WORKER_ERROR',
  RemoteTimeout: 'REMOTE_TIMEOUT',
  RemoteUnreachable: 'REMOTE_UNREACHABLE',
  RemoteProtocol: 'REMOTE_PROTOCOL',
  ExecutorState: 'EXECUTOR_STATE',
  ExecutorUnavailable: 'EXECUTOR_UNAVAILABLE',
  ExecutorRunRefused: 'EXECUTOR_RUN_REFUSED',
  RetainedRunInspection: 'RETAINED_RUN_INSPECTION',
} as const;

/** One of {@link HttpErrorCodes}. */
export type HttpErrorCode = (typeof HttpErrorCodes)[keyof typeof HttpErrorCodes];

/** The worker answered a request with an error status (other than a superseded refusal). */
export class RemoteWorkerError extends SkeinError {
  constructor(
    readonly executionId: string,
    /** HTTP status of the answer. */
    readonly status: number,
    /** The wire `code` of the answer, e.g. `invalid_request`, `internal` (see `WireCodes`). */
    readonly remoteCode: string,
    readonly remoteMessage: string,
    /** Id under which the worker logged the error (500 only). */
    readonly errorId?: string,
    /** Fields the worker refused (400 only). */
    readonly issues: readonly ValidationIssue[] = [],
  ) {
    const where = errorId === undefined ? '' : ` (error id ${errorId})`;
    const fields = issues.length === 0 ? '' : `: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`;
    super(
      HttpErrorCodes.RemoteWorker,
      `execution "${executionId}": the worker answered ${status} ${remoteCode}, "${remoteMessage}"${where}${fields}`,
    );
  }
}

/** No answer from the worker within `timeoutMs`; the worker may still be running the request. */
export class RemoteTimeoutError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly url: string,
    readonly timeoutMs: number,
  ) {
    super(
      HttpErrorCodes.RemoteTimeout,
      `execution "${executionId}": no answer from ${url} within ${timeoutMs} ms`,
    );
  }
}

/** The worker could not be reached (connection refused, reset, DNS); `cause` holds the original. */
export class RemoteUnreachableError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly url: string,
    options?: { cause?: unknown },
  ) {
    const detail = options?.cause instanceof Error ? `: ${options.cause.message}` : '';
    super(
      HttpErrorCodes.RemoteUnreachable,
      `execution "${executionId}": ${url} could not be reached${detail}`,
      options,
    );
  }
}

/** The worker's answer could not be understood (not JSON, or not the expected shape). */
export class RemoteProtocolError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly url: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(
      HttpErrorCodes.RemoteProtocol,
      `execution "${executionId}": unexpected answer from ${url}: ${reason}`,
      options,
    );
  }
}

/**
 * A state directory that belongs to another executor id or was written by another
 * `packageVersion` (E6): refused before anything is written, so no run is resumed by code
 * that did not accept it.
 */
export class ExecutorStateError extends SkeinError {
  constructor(
    readonly stateDir: string,
    /** `executor_id` or `package_version`. */
    readonly field: string,
    readonly stored: string,
    readonly given: string,
  ) {
    super(
      HttpErrorCodes.ExecutorState,
      `state directory ${stateDir} holds ${field} "${stored}"; this executor has "${given}"`,
    );
  }
}

/** No executor holds a live session the hub could hand the execution to (or the hub closed). */
export class ExecutorUnavailableError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly reason: string,
  ) {
    super(HttpErrorCodes.ExecutorUnavailable, `execution "${executionId}": ${reason}`);
  }
}

/** The hub will not hand the execution to an executor (it has progress in the central log). */
export class ExecutorRunRefusedError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly reason: string,
  ) {
    super(
      HttpErrorCodes.ExecutorRunRefused,
      `execution "${executionId}" cannot run on an executor: ${reason}`,
    );
  }
}

/** Why an inspection of a retained run gave no answer; never a stand-in for ABSENT. */
export type InspectionFailure =
  | 'not-connected'
  | 'not-current-session'
  | 'malformed-id'
  | 'oversized-field'
  | 'read-failed'
  | 'shutdown'
  | 'gave-up';

/** `inspectRetainedRun` could not read the executor's answer: the reason says which way. */
export class RetainedRunInspectionError extends SkeinError {
  constructor(
    readonly executorId: string,
    readonly executionId: string,
    readonly reason: InspectionFailure,
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(
      HttpErrorCodes.RetainedRunInspection,
      `inspection of "${executionId}" on executor "${executorId}" failed (${reason}): ${detail}`,
      options,
    );
  }
}
