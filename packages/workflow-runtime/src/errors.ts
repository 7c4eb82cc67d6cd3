/**
 * Every error Skein raises. Each has a stable `code`, its `name` set, the structured fields
 * as properties, a message built from them, and the original error kept as `cause`.
 */

/** Plain, serializable form of a Skein error, for crossing a process boundary. */
export interface SerializedError {
  code: string;
  name: string;
  message: string;
  executionId?: string;
}

/** Base class of every Skein error. `code` is stable across releases; match on it (or `name`). */
export class SkeinError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.name = new.target.name;
  }

  /** The plain form of this error: `{ code, name, message, executionId? }`. */
  toJSON(): SerializedError {
    const executionId = (this as { executionId?: unknown }).executionId;
    return {
      code: this.code,
      name: this.name,
      message: this.message,
      ...(typeof executionId === 'string' ? { executionId } : {}),
    };
  }
}

/** L1: an append targeted a sequence number that is already taken. */
export class DuplicateSequenceError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly seq: number,
    options?: { cause?: unknown; code?: string; message?: string },
  ) {
    super(
      options?.code ?? 'DUPLICATE_SEQUENCE',
      options?.message ?? `execution "${executionId}": sequence ${seq} is already taken`,
      options,
    );
  }
}

/** L2: seq 0 of this execution is already written; another start won. */
export class ExecutionAlreadyExistsError extends DuplicateSequenceError {
  constructor(
    executionId: string,
    readonly existingWorkflow?: string,
    options?: { cause?: unknown },
  ) {
    super(executionId, 0, {
      ...options,
      code: 'EXECUTION_ALREADY_EXISTS',
      message:
        `execution "${executionId}" already exists` +
        (existingWorkflow === undefined ? '' : ` (workflow "${existingWorkflow}")`),
    });
  }
}

/** L1: an envelope id was written twice. */
export class DuplicateEnvelopeIdError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly envelopeId: string,
    options?: { cause?: unknown },
  ) {
    super(
      'DUPLICATE_ENVELOPE_ID',
      `execution "${executionId}": envelope id ${envelopeId} is already in the log`,
      options,
    );
  }
}

/** L1: an append skipped ahead of the log's next sequence number. */
export class SequenceGapError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly seq: number,
    readonly expected: number,
    options?: { cause?: unknown },
  ) {
    super(
      'SEQUENCE_GAP',
      `execution "${executionId}": append at sequence ${seq} would leave a gap; the next sequence is ${expected}`,
      options,
    );
  }
}

/** L3: the writer's fence is older than the newest fence of the execution. Nothing was written. */
export class StaleFenceError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly fence: number,
    readonly current: number,
    options?: { cause?: unknown },
  ) {
    super(
      'STALE_FENCE',
      `execution "${executionId}": fence ${fence} is stale; the current fence is ${current}`,
      options,
    );
  }
}

/** A start was fenced out by a holder that has not written seq 0. Retry the start. */
export class StartFencedOutError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly fence: number,
    readonly current: number,
    options?: { cause?: unknown },
  ) {
    super(
      'START_FENCED_OUT',
      `execution "${executionId}": start with fence ${fence} was fenced out by fence ${current} before seq 0 was written; retry the start`,
      options,
    );
  }
}

/** L6: the execution has reached a terminal state; nothing may be appended after it. */
export class ExecutionTerminatedError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly status: string,
    options?: { cause?: unknown },
  ) {
    super('EXECUTION_TERMINATED', `execution "${executionId}" is ${status}; its log is closed`, options);
  }
}

/** A store could not complete a write for infrastructure reasons; `cause` holds the original. */
export class StorageWriteError extends SkeinError {
  constructor(
    readonly executionId: string,
    options?: { cause?: unknown },
  ) {
    const detail = options?.cause instanceof Error ? `: ${options.cause.message}` : '';
    super('STORAGE_WRITE_FAILED', `execution "${executionId}": the write failed${detail}`, options);
  }
}

/** L7: a payload is larger than the per-event limit. Nothing was written. */
export class PayloadTooLargeError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly where: string,
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(
      'PAYLOAD_TOO_LARGE',
      `execution "${executionId}": ${where} is ${bytes} bytes encoded, over the limit of ${limit} bytes`,
    );
  }
}

/** A value cannot go through the codec (a function, a symbol, a class instance, a cycle). */
export class SerializationError extends SkeinError {
  constructor(
    readonly path: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super('NOT_SERIALIZABLE', `value at ${path} cannot be recorded: ${reason}`, options);
  }
}

/** One problem found while validating input. */
export interface ValidationIssue {
  path: string;
  message: string;
}

/** L7: input failed its schema. Nothing was written. */
export class InvalidInputError extends SkeinError {
  constructor(
    readonly where: string,
    readonly issues: readonly ValidationIssue[],
    options?: { cause?: unknown },
  ) {
    super(
      'INVALID_INPUT',
      `${where} is invalid: ${issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ')}`,
      options,
    );
  }
}

/** L7: no workflow of this name (and version) is registered with the runtime. */
export class UnknownWorkflowError extends SkeinError {
  constructor(
    readonly workflow: string,
    readonly version: number | undefined,
    readonly registered: readonly string[],
    /** The execution that needs it, when one does (an execution pinned to an unregistered version). */
    readonly executionId?: string,
  ) {
    super(
      'UNKNOWN_WORKFLOW',
      `${executionId === undefined ? '' : `execution "${executionId}": `}` +
        `workflow "${workflow}"${version === undefined ? '' : ` version ${version}`} is not registered` +
        ` (registered: ${registered.length === 0 ? 'none' : registered.join(', ')})`,
    );
  }
}

/** No execution with this id exists. */
export class ExecutionNotFoundError extends SkeinError {
  constructor(readonly executionId: string) {
    super('EXECUTION_NOT_FOUND', `execution "${executionId}" does not exist`);
  }
}

/** Description of one context call, as the log holds it or as the code made it. */
export interface CallDescription {
  kind: string;
  name: string;
}

/** Replay found the code making a different call than the log recorded at this position. */
export class NonDeterminismError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly position: number,
    readonly logged: CallDescription,
    readonly called: CallDescription,
  ) {
    super(
      'NON_DETERMINISM',
      `execution "${executionId}": at position ${position} the log holds ${logged.kind} "${logged.name}" ` +
        `but the code called ${called.kind} "${called.name}"`,
    );
  }
}

/** Thrown by a step to fail it at once, skipping the rest of its retry budget. */
export class NonRetryableError extends SkeinError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('NON_RETRYABLE', message, options);
  }
}

/** A step failed its last attempt; the workflow may catch this. `cause` is the last failure. */
export class StepFailedError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly step: string,
    readonly attempts: number,
    options?: { cause?: unknown },
  ) {
    const detail = options?.cause instanceof Error ? `: ${options.cause.message}` : '';
    super(
      'STEP_FAILED',
      `execution "${executionId}": step "${step}" failed after ${attempts} attempt${attempts === 1 ? '' : 's'}${detail}`,
      options,
    );
  }
}

/** A step attempt ran past its `timeoutMs`. Counts as a failed attempt. */
export class StepTimeoutError extends SkeinError {
  constructor(
    readonly step: string,
    readonly timeoutMs: number,
  ) {
    super('STEP_TIMEOUT', `step "${step}" did not finish within ${timeoutMs} ms`);
  }
}

/** `handle.result()` of an execution that ended failed, cancelled or dead-lettered. */
export class ExecutionFailedError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly status: string,
    options?: { cause?: unknown },
  ) {
    const detail = options?.cause instanceof Error ? `: ${options.cause.message}` : '';
    super('EXECUTION_FAILED', `execution "${executionId}" ended ${status}${detail}`, options);
  }
}

/** The runtime was closed while the call was in progress. */
export class RuntimeClosedError extends SkeinError {
  constructor() {
    super('RUNTIME_CLOSED', 'the runtime is closed');
  }
}

/** The execution has ended; a signal or another request that needs it running is refused. */
export class ExecutionFinishedError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly status: string,
    readonly operation: string,
  ) {
    super(
      'EXECUTION_FINISHED',
      `execution "${executionId}" is ${status}; ${operation} refused (nothing was written)`,
    );
  }
}

/** A signal name the workflow does not declare in `defineWorkflow({ signals })`. */
export class UnknownSignalError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly workflow: string,
    readonly signal: string,
    readonly declared: readonly string[],
  ) {
    super(
      'UNKNOWN_SIGNAL',
      `execution "${executionId}": workflow "${workflow}" declares no signal "${signal}"` +
        ` (declared: ${declared.length === 0 ? 'none' : declared.join(', ')})`,
    );
  }
}

/**
 * Thrown into the workflow at its next context call once `runtime.cancel` was requested. The
 * workflow may run cleanup in `finally`; the execution ends `cancelled` whatever it returns.
 */
export class CancelledError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly reason: string,
  ) {
    super('CANCELLED', `execution "${executionId}" was cancelled: ${reason}`);
  }
}

/** A child started with `ctx.child` ended other than `completed`; `cause` is its recorded error. */
export class ChildFailedError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly childId: string,
    readonly status: string,
    options?: { cause?: unknown },
  ) {
    const detail = options?.cause instanceof Error ? `: ${options.cause.message}` : '';
    super('CHILD_FAILED', `execution "${executionId}": child "${childId}" ended ${status}${detail}`, options);
  }
}

/** Stable codes of the errors above, for matching without classes. */
export const ErrorCodes = {
  DuplicateSequence: 'DUPLICATE_SEQUENCE',
  ExecutionAlreadyExists: 'EXECUTION_ALREADY_EXISTS',
  DuplicateEnvelopeId: 'DUPLICATE_ENVELOPE_ID',
  SequenceGap: 'SEQUENCE_GAP',
  StaleFence: 'STALE_FENCE',
  StartFencedOut: 'START_FENCED_OUT',
  ExecutionTerminated: 'EXECUTION_TERMINATED',
  StorageWriteFailed: 'STORAGE_WRITE_FAILED',
  PayloadTooLarge: 'PAYLOAD_TOO_LARGE',
  NotSerializable: 'NOT_SERIALIZABLE',
  InvalidInput: 'INVALID_INPUT',
  UnknownWorkflow: 'UNKNOWN_WORKFLOW',
  ExecutionNotFound: 'EXECUTION_NOT_FOUND',
  NonDeterminism: 'NON_DETERMINISM',
  NonRetryable: 'NON_RETRYABLE',
  StepFailed: 'STEP_FAILED',
  StepTimeout: 'STEP_TIMEOUT',
  ExecutionFailed: 'EXECUTION_FAILED',
  RuntimeClosed: 'RUNTIME_CLOSED',
  ExecutionFinished: 'EXECUTION_FINISHED',
  UnknownSignal: 'UNKNOWN_SIGNAL',
  Cancelled: 'CANCELLED',
  ChildFailed: 'CHILD_FAILED',
} as const;
