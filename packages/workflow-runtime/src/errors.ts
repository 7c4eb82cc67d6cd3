/**
 * Every error Skein raises. Each has a stable `code` (from {@link ErrorCodes}), its `name` set,
 * the structured fields as properties, a message built from them, and the original error kept
 * as `cause`. `JSON.stringify` writes `{ code, name, message, executionId?, cause? }`.
 */

/** Stable codes of the errors of this package, by class (without the `Error` suffix). */
export const ErrorCodes = {
  DuplicateSequence: 'DUPLICATE_SEQUENCE',
  ExecutionAlreadyExists: 'EXECUTION_ALREADY_EXISTS',
  DuplicateEnvelopeId: 'DUPLICATE_ENVELOPE_ID',
  SequenceGap: 'SEQUENCE_GAP',
  StaleFence: 'STALE_FENCE',
  FenceNotGranted: 'FENCE_NOT_GRANTED',
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
  SignalInboxFull: 'SIGNAL_INBOX_FULL',
  UnknownUpdate: 'UNKNOWN_UPDATE',
  UpdateFailed: 'UPDATE_FAILED',
  UpdateTimeout: 'UPDATE_TIMEOUT',
  Cancelled: 'CANCELLED',
  DeadlineExceeded: 'DEADLINE_EXCEEDED',
  ChildFailed: 'CHILD_FAILED',
  InvalidAppend: 'INVALID_APPEND',
  TenantScope: 'TENANT_SCOPE',
  DuplicateWorkflow: 'DUPLICATE_WORKFLOW',
  InvalidErrorClass: 'INVALID_ERROR_CLASS',
  ExecutionInputMismatch: 'EXECUTION_INPUT_MISMATCH',
  UnknownQueue: 'UNKNOWN_QUEUE',
  UnknownDestination: 'UNKNOWN_DESTINATION',
  UnknownSchedule: 'UNKNOWN_SCHEDULE',
  FanOutStaleAttempt: 'FANOUT_STALE_ATTEMPT',
  FanOutNotSeeded: 'FANOUT_NOT_SEEDED',
  FanOutPlanMismatch: 'FANOUT_PLAN_MISMATCH',
  RetryAfter: 'RETRY_AFTER',
  ResultTimeout: 'RESULT_TIMEOUT',
  ExecutionNotResumable: 'EXECUTION_NOT_RESUMABLE',
  ForkRefused: 'FORK_REFUSED',
} as const;

/** One of {@link ErrorCodes}. */
export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/** The JSON form of an error Skein hands out, as `JSON.stringify` writes it. */
export interface SerializedError {
  /** Stable code: every Skein error has one; another error keeps its own `code` field, if any. */
  code?: string;
  name: string;
  message: string;
  /** The execution the error concerns, when it names one. */
  executionId?: string;
  /** The cause: in this same form when it is an error, else a JSON value. */
  cause?: unknown;
}

/** Base class of every Skein error. `code` is stable across releases; match on it (or `name`). */
export class SkeinError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.name = new.target.name;
  }

  /** The plain form of this error: `{ code, name, message, executionId?, cause? }`. */
  toJSON(): SerializedError & { code: string } {
    return { ...serializeErrorAt(this, 0, new Set()), code: this.code };
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
      options?.code ?? ErrorCodes.DuplicateSequence,
      options?.message ?? `execution "${executionId}": sequence ${seq} is already taken`,
      options,
    );
  }
}

/**
 * L2: seq 0 of this execution is already written; another start won. `reason` (default: none)
 * says why an existing execution cannot be used, e.g. a child id that belongs to another parent.
 */
export class ExecutionAlreadyExistsError extends DuplicateSequenceError {
  constructor(
    executionId: string,
    readonly existingWorkflow?: string,
    options?: { cause?: unknown; reason?: string },
  ) {
    super(executionId, 0, {
      ...(options?.cause === undefined ? {} : { cause: options.cause }),
      code: ErrorCodes.ExecutionAlreadyExists,
      message:
        `execution "${executionId}" already exists` +
        (existingWorkflow === undefined ? '' : ` (workflow "${existingWorkflow}")`) +
        (options?.reason === undefined ? '' : `: ${options.reason}`),
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
      ErrorCodes.DuplicateEnvelopeId,
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
      ErrorCodes.SequenceGap,
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
      ErrorCodes.StaleFence,
      `execution "${executionId}": fence ${fence} is stale; the current fence is ${current}`,
      options,
    );
  }
}

/**
 * L3: the writer's fence is newer than the newest fence the store granted for the execution
 * (`acquireFence` never returned it), so no holder could have it. Nothing was written.
 */
export class FenceNotGrantedError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly fence: number,
    readonly current: number,
    options?: { cause?: unknown },
  ) {
    super(
      ErrorCodes.FenceNotGranted,
      `execution "${executionId}": fence ${fence} was never granted; the newest granted fence is ${current}`,
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
      ErrorCodes.StartFencedOut,
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
    super(
      ErrorCodes.ExecutionTerminated,
      `execution "${executionId}" is ${status}; its log is closed`,
      options,
    );
  }
}

/** A store could not complete a write for infrastructure reasons; `cause` holds the original. */
export class StorageWriteError extends SkeinError {
  constructor(
    readonly executionId: string,
    options?: { cause?: unknown },
  ) {
    const detail = options?.cause instanceof Error ? `: ${options.cause.message}` : '';
    super(ErrorCodes.StorageWriteFailed, `execution "${executionId}": the write failed${detail}`, options);
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
      ErrorCodes.PayloadTooLarge,
      `execution "${executionId}": ${where} is ${bytes} bytes encoded, over the limit of ${limit} bytes`,
    );
  }
}

/**
 * A value cannot go through the codec: a function, a symbol, a class instance, a cycle, a
 * `toJSON` method, nesting past `MAX_DEPTH`, or reading it threw (then `cause` is what it threw).
 */
export class SerializationError extends SkeinError {
  constructor(
    readonly path: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(ErrorCodes.NotSerializable, `value at ${path} cannot be recorded: ${reason}`, options);
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
      ErrorCodes.InvalidInput,
      `${where} is invalid: ${issues.map((issue) => (issue.path === '' ? issue.message : `${issue.path}: ${issue.message}`)).join('; ')}`,
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
      ErrorCodes.UnknownWorkflow,
      `${executionId === undefined ? '' : `execution "${executionId}": `}` +
        `workflow "${workflow}"${version === undefined ? '' : ` version ${version}`} is not registered` +
        ` (registered: ${registered.length === 0 ? 'none' : registered.join(', ')})`,
    );
  }
}

/** A queue name that no `createRuntime({ queues })` of this runtime registered. */
export class UnknownQueueError extends SkeinError {
  constructor(
    readonly queue: string,
    readonly registered: readonly string[],
  ) {
    super(
      ErrorCodes.UnknownQueue,
      `queue "${queue}" is not registered (registered: ${registered.length === 0 ? 'none' : registered.join(', ')})`,
    );
  }
}

/** A share read for a destination that no running step of this runtime declared (adr/0057). */
export class UnknownDestinationError extends SkeinError {
  constructor(
    readonly destination: string,
    /** The destinations that running steps declared. */
    readonly running: readonly string[],
  ) {
    super(
      ErrorCodes.UnknownDestination,
      `destination "${destination}" has no share: no running step declared it (running: ${running.length === 0 ? 'none' : running.join(', ')})`,
    );
  }
}

/** A schedule name that no `createRuntime({ schedules })` of this runtime registered. */
export class UnknownScheduleError extends SkeinError {
  constructor(
    readonly schedule: string,
    readonly registered: readonly string[],
  ) {
    super(
      ErrorCodes.UnknownSchedule,
      `schedule "${schedule}" is not registered (registered: ${registered.length === 0 ? 'none' : registered.join(', ')})`,
    );
  }
}

/**
 * F4: a fan-out write came from an attempt that is no longer the item's current one (another
 * attempt took over, its lease or the chunk lease expired, or the item already ended). Nothing
 * of the batch was written.
 */
export class FanOutStaleAttemptError extends SkeinError {
  constructor(
    readonly fanOutId: string,
    readonly chunkId: number,
    readonly index: number,
    readonly reason: string,
  ) {
    super(
      ErrorCodes.FanOutStaleAttempt,
      `fan-out "${fanOutId}" chunk ${chunkId}: the write of item ${index} was refused (${reason}); nothing of the batch was written`,
    );
  }
}

/** F1: a fan-out was to be dispatched before every chunk of its plan was seeded. */
export class FanOutNotSeededError extends SkeinError {
  constructor(
    readonly fanOutId: string,
    readonly seededChunks: number,
    readonly chunks: number,
    readonly seededItems: number,
    readonly total: number,
  ) {
    super(
      ErrorCodes.FanOutNotSeeded,
      `fan-out "${fanOutId}" cannot be dispatched: ${seededChunks} of ${chunks} chunks ` +
        `(${seededItems} of ${total} items) are seeded`,
    );
  }
}

/** F2: a fan-out id already holds a different plan (or a chunk was seeded differently); it fails. */
export class FanOutPlanMismatchError extends SkeinError {
  constructor(
    readonly fanOutId: string,
    readonly mismatch: string,
  ) {
    super(ErrorCodes.FanOutPlanMismatch, `fan-out "${fanOutId}" does not match its stored plan: ${mismatch}`);
  }
}

/** No execution with this id exists. */
export class ExecutionNotFoundError extends SkeinError {
  constructor(readonly executionId: string) {
    super(ErrorCodes.ExecutionNotFound, `execution "${executionId}" does not exist`);
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
      ErrorCodes.NonDeterminism,
      `execution "${executionId}": at position ${position} the log holds ${logged.kind} "${logged.name}" ` +
        `but the code called ${called.kind} "${called.name}"`,
    );
  }
}

/**
 * Thrown by a step to fail it at once, skipping the rest of its retry budget. A subclass may
 * give its own stable `code` (default: `NON_RETRYABLE`); the step failure records it.
 */
export class NonRetryableError extends SkeinError {
  constructor(message: string, options?: { cause?: unknown; code?: string }) {
    super(options?.code ?? ErrorCodes.NonRetryable, message, options);
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
      ErrorCodes.StepFailed,
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
    super(ErrorCodes.StepTimeout, `step "${step}" did not finish within ${timeoutMs} ms`);
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
    super(ErrorCodes.ExecutionFailed, `execution "${executionId}" ended ${status}${detail}`, options);
  }
}

/** The runtime was closed while the call was in progress. */
export class RuntimeClosedError extends SkeinError {
  constructor() {
    super(ErrorCodes.RuntimeClosed, 'the runtime is closed');
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
      ErrorCodes.ExecutionFinished,
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
      ErrorCodes.UnknownSignal,
      `execution "${executionId}": workflow "${workflow}" declares no signal "${signal}"` +
        ` (declared: ${declared.length === 0 ? 'none' : declared.join(', ')})`,
    );
  }
}

/** An update name the workflow does not declare in `defineWorkflow({ updates })`. */
export class UnknownUpdateError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly workflow: string,
    readonly update: string,
    readonly declared: readonly string[],
  ) {
    super(
      ErrorCodes.UnknownUpdate,
      `execution "${executionId}": workflow "${workflow}" declares no update "${update}"` +
        ` (declared: ${declared.length === 0 ? 'none' : declared.join(', ')}); nothing was written`,
    );
  }
}

/**
 * The body's `ctx.onUpdate` handler threw when it was applied (the failure is recorded, so a
 * repeated `updateId` gets it again); `cause` is what it threw, as the log holds it.
 */
export class UpdateFailedError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly update: string,
    readonly updateId: string,
    options?: { cause?: unknown },
  ) {
    const detail = options?.cause instanceof Error ? `: ${options.cause.message}` : '';
    super(
      ErrorCodes.UpdateFailed,
      `execution "${executionId}": update "${update}" (id "${updateId}") failed in its handler${detail}`,
      options,
    );
  }
}

/**
 * `runtime.update` waited `timeoutMs` and the update was not applied yet. It stays in the
 * inbox and is applied when the body next waits; call again with the same `updateId` for its
 * result.
 */
export class UpdateTimeoutError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly update: string,
    readonly updateId: string,
    readonly timeoutMs: number,
  ) {
    super(
      ErrorCodes.UpdateTimeout,
      `execution "${executionId}": update "${update}" (id "${updateId}") was not applied within ` +
        `${timeoutMs} ms; it stays in the inbox: call again with the same updateId for its result`,
    );
  }
}

/**
 * `runtime.signal` refused a signal because the execution already has `maxPending` signals
 * waiting in its inbox (`createRuntime({ maxPendingSignals })`). Nothing was written; the
 * signal can be sent again once the workflow has consumed some.
 */
export class SignalInboxFullError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly signal: string,
    readonly maxPending: number,
  ) {
    super(
      ErrorCodes.SignalInboxFull,
      `execution "${executionId}": signal "${signal}" refused: the inbox already holds ${maxPending} ` +
        'signals waiting to be consumed (maxPendingSignals); nothing was written',
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
    options?: { code?: string },
  ) {
    super(options?.code ?? ErrorCodes.Cancelled, `execution "${executionId}" was cancelled: ${reason}`);
  }
}

/**
 * The `CancelledError` of an execution whose deadline (`start(…, { timeoutMs | deadline })`)
 * passed: thrown into the body like any cancellation (cleanup in `finally` runs) and recorded
 * as the error of `EXECUTION_CANCELLED`; `deadline` is the instant, in ms since the epoch.
 */
export class DeadlineExceededError extends CancelledError {
  constructor(
    executionId: string,
    reason: string,
    readonly deadline: number,
  ) {
    super(executionId, reason, { code: ErrorCodes.DeadlineExceeded });
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
    super(
      ErrorCodes.ChildFailed,
      `execution "${executionId}": child "${childId}" ended ${status}${detail}`,
      options,
    );
  }
}

/** Refused by `createRuntime`: the same workflow name and version is in `workflows` twice. */
export class DuplicateWorkflowError extends SkeinError {
  constructor(
    readonly workflow: string,
    readonly version: number,
  ) {
    super(
      ErrorCodes.DuplicateWorkflow,
      `workflow "${workflow}" version ${version} is registered twice; each name and version may be registered once`,
    );
  }
}

/** Refused by `createRuntime` or `defineWorkflow`: an entry of `errors` the codec cannot revive by. */
export class InvalidErrorClassError extends SkeinError {
  constructor(
    /** The class's name, or what was given instead of a class. */
    readonly errorClass: string,
    readonly reason: string,
  ) {
    super(ErrorCodes.InvalidErrorClass, `error class ${errorClass} cannot be registered: ${reason}`);
  }
}

/** A request that no store may accept: malformed rather than conflicting. */
export class InvalidAppendError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly reason: string,
  ) {
    super(ErrorCodes.InvalidAppend, `execution "${executionId}": append refused: ${reason}`);
  }
}

/** An operation that tenant-scoped stores cannot offer. */
export class TenantScopeError extends SkeinError {
  constructor(
    readonly tenant: string,
    readonly reason: string,
  ) {
    super(ErrorCodes.TenantScope, `tenant "${tenant}": ${reason}`);
  }
}

/**
 * A strict start (`start(workflow, input, { executionId, strict: true })`) found the execution
 * already started with another input: it refuses instead of returning the old execution.
 * Nothing was written.
 */
export class ExecutionInputMismatchError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly workflow: string,
  ) {
    super(
      ErrorCodes.ExecutionInputMismatch,
      `execution "${executionId}" of workflow "${workflow}" already exists with a different input; ` +
        'a strict start refuses it (start under another id, or without strict to get the existing one); ' +
        'nothing was written',
    );
  }
}

/**
 * A step failure that says when to try again: a step retries it after `retryAfterMs` instead of
 * its backoff (bounded by the policy's `maxRetryAfterMs`), while its budget lasts. Thrown by
 * {@link retryAfter}; any error with a numeric `retryAfterMs` property works the same way.
 */
export class RetryAfterError extends SkeinError {
  constructor(
    readonly retryAfterMs: number,
    options?: { cause?: unknown },
  ) {
    const detail = options?.cause instanceof Error ? `: ${options.cause.message}` : '';
    super(ErrorCodes.RetryAfter, `retry after ${retryAfterMs} ms${detail}`, options);
  }
}

/**
 * An error for a step to throw when the service it called said when to come back (a 429's
 * `Retry-After`): the next attempt waits `ms` instead of the backoff.
 * @example
 * if (response.status === 429) throw retryAfter(Number(response.headers.get('retry-after')) * 1000, new Error('rate limited'));
 */
export function retryAfter(ms: number, cause?: unknown): RetryAfterError {
  return new RetryAfterError(ms, cause === undefined ? undefined : { cause });
}

/** `handle.result({ timeoutMs })` waited `timeoutMs` and the execution had not ended; it goes on. */
export class ResultTimeoutError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly timeoutMs: number,
    readonly status: string,
  ) {
    super(
      ErrorCodes.ResultTimeout,
      `execution "${executionId}" did not end within ${timeoutMs} ms (it is ${status}; ` +
        'it goes on, nothing was changed)',
    );
  }
}

/** `runtime.resume` of an execution that is neither `failed` nor `dead_lettered`; nothing was written. */
export class ExecutionNotResumableError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly status: string,
    options?: { cause?: unknown },
  ) {
    super(
      ErrorCodes.ExecutionNotResumable,
      `execution "${executionId}" is ${status}; only a failed or dead-lettered execution can be ` +
        'resumed (nothing was written)',
      options,
    );
  }
}

/** `runtime.fork` refused: `reason` says why (an unknown step, a call before it not settled); nothing was written. */
export class ForkRefusedError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly fromStep: string,
    readonly reason: string,
  ) {
    super(
      ErrorCodes.ForkRefused,
      `fork of execution "${executionId}" from step "${fromStep}" refused: ${reason} (nothing was written)`,
    );
  }
}

/** A class whose instances are errors, whatever its constructor takes. */
export type ErrorClass = abstract new (...args: never) => Error;

/**
 * Every error class of this package by its code. The codec revives a recorded error of one of
 * these codes as an instance of its class (adr/0020).
 */
export const ErrorClassesByCode: { readonly [C in ErrorCode]: ErrorClass } = {
  [ErrorCodes.DuplicateSequence]: DuplicateSequenceError,
  [ErrorCodes.ExecutionAlreadyExists]: ExecutionAlreadyExistsError,
  [ErrorCodes.DuplicateEnvelopeId]: DuplicateEnvelopeIdError,
  [ErrorCodes.SequenceGap]: SequenceGapError,
  [ErrorCodes.StaleFence]: StaleFenceError,
  [ErrorCodes.FenceNotGranted]: FenceNotGrantedError,
  [ErrorCodes.StartFencedOut]: StartFencedOutError,
  [ErrorCodes.ExecutionTerminated]: ExecutionTerminatedError,
  [ErrorCodes.StorageWriteFailed]: StorageWriteError,
  [ErrorCodes.PayloadTooLarge]: PayloadTooLargeError,
  [ErrorCodes.NotSerializable]: SerializationError,
  [ErrorCodes.InvalidInput]: InvalidInputError,
  [ErrorCodes.UnknownWorkflow]: UnknownWorkflowError,
  [ErrorCodes.ExecutionNotFound]: ExecutionNotFoundError,
  [ErrorCodes.NonDeterminism]: NonDeterminismError,
  [ErrorCodes.NonRetryable]: NonRetryableError,
  [ErrorCodes.StepFailed]: StepFailedError,
  [ErrorCodes.StepTimeout]: StepTimeoutError,
  [ErrorCodes.ExecutionFailed]: ExecutionFailedError,
  [ErrorCodes.RuntimeClosed]: RuntimeClosedError,
  [ErrorCodes.ExecutionFinished]: ExecutionFinishedError,
  [ErrorCodes.UnknownSignal]: UnknownSignalError,
  [ErrorCodes.SignalInboxFull]: SignalInboxFullError,
  [ErrorCodes.UnknownUpdate]: UnknownUpdateError,
  [ErrorCodes.UpdateFailed]: UpdateFailedError,
  [ErrorCodes.UpdateTimeout]: UpdateTimeoutError,
  [ErrorCodes.Cancelled]: CancelledError,
  [ErrorCodes.DeadlineExceeded]: DeadlineExceededError,
  [ErrorCodes.ChildFailed]: ChildFailedError,
  [ErrorCodes.DuplicateWorkflow]: DuplicateWorkflowError,
  [ErrorCodes.InvalidErrorClass]: InvalidErrorClassError,
  [ErrorCodes.InvalidAppend]: InvalidAppendError,
  [ErrorCodes.TenantScope]: TenantScopeError,
  [ErrorCodes.ExecutionInputMismatch]: ExecutionInputMismatchError,
  [ErrorCodes.UnknownQueue]: UnknownQueueError,
  [ErrorCodes.UnknownDestination]: UnknownDestinationError,
  [ErrorCodes.UnknownSchedule]: UnknownScheduleError,
  [ErrorCodes.FanOutStaleAttempt]: FanOutStaleAttemptError,
  [ErrorCodes.FanOutNotSeeded]: FanOutNotSeededError,
  [ErrorCodes.FanOutPlanMismatch]: FanOutPlanMismatchError,
  [ErrorCodes.RetryAfter]: RetryAfterError,
  [ErrorCodes.ResultTimeout]: ResultTimeoutError,
  [ErrorCodes.ExecutionNotResumable]: ExecutionNotResumableError,
  [ErrorCodes.ForkRefused]: ForkRefusedError,
};

const MAX_CAUSE_DEPTH = 16;

/**
 * The JSON form of any thrown value: an error as `{ code?, name, message, executionId?, cause? }`
 * (causes in the same form, as deep as 16), anything else as a JSON value (a `bigint` as its
 * decimal text, what JSON cannot hold as its `String`). Never throws.
 * @example
 * response.end(JSON.stringify({ error: serializeError(error) }));
 */
export function serializeError(value: unknown): unknown {
  return jsonOf(value, 0, new Set());
}

function serializeErrorAt(error: Error, depth: number, seen: Set<unknown>): SerializedError {
  seen.add(error);
  const { code, executionId } = error as Error & { code?: unknown; executionId?: unknown };
  const out: SerializedError =
    typeof code === 'string' || typeof code === 'number'
      ? { code: String(code), name: String(error.name), message: String(error.message) }
      : { name: String(error.name), message: String(error.message) };
  if (typeof executionId === 'string') out.executionId = executionId;
  if (error.cause !== undefined) out.cause = jsonOf(error.cause, depth + 1, seen);
  return out;
}

function jsonOf(value: unknown, depth: number, seen: Set<unknown>): unknown {
  try {
    if (value instanceof Error) {
      if (seen.has(value)) return `[cycle: ${String(value.name)}]`;
      if (depth > MAX_CAUSE_DEPTH) return `[cause chain deeper than ${MAX_CAUSE_DEPTH}]`;
      return serializeErrorAt(value, depth, seen);
    }
    switch (typeof value) {
      case 'string':
      case 'boolean':
      case 'undefined':
        return value;
      case 'number':
        return Number.isFinite(value) ? value : String(value);
      case 'object':
        return value === null ? null : (JSON.parse(JSON.stringify(value)) as unknown);
      default:
        return String(value);
    }
  } catch {
    // Not JSON (a cycle, a BigInt inside, a throwing getter): its text, or that it has none.
    return printable(value);
  }
}

function printable(value: unknown): string {
  try {
    return String(value);
  } catch (error) {
    return `[a value that cannot be printed: ${error instanceof Error ? error.message : 'unknown'}]`;
  }
}
