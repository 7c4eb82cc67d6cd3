/**
 * Errors of the local worker runtime and the supervisor: a stable `code`, `name` set,
 * structured fields, the original kept as `cause`.
 */
import { SkeinError } from '@skein/workflow-runtime';

/** Stable codes of the errors of this package, by class (without the `Error` suffix). */
export const LocalErrorCodes = {
  SupervisorTickFailed: 'SUPERVISOR_TICK_FAILED',
  LeaseMismatch: 'LEASE_MISMATCH',
  QueueSlotLapsed: 'QUEUE_SLOT_LAPSED',
  OutboxMissing: 'OUTBOX_MISSING',
  TransportClosed: 'TRANSPORT_CLOSED',
} as const;

/** One of {@link LocalErrorCodes}. */
export type LocalErrorCode = (typeof LocalErrorCodes)[keyof typeof LocalErrorCodes];

/** A supervisor tick failed as a whole (an infrastructure error, e.g. listing failed); it runs again later. */
export class SupervisorTickError extends SkeinError {
  constructor(
    /** The part of the tick that failed, e.g. `list pending executions`. */
    readonly phase: string,
    /** Per-execution errors collected before the tick failed. */
    readonly errors: readonly [executionId: string, error: unknown][],
    options?: { cause?: unknown },
  ) {
    const detail = options?.cause instanceof Error ? `: ${options.cause.message}` : '';
    super(
      LocalErrorCodes.SupervisorTickFailed,
      `supervisor tick failed at "${phase}"${detail}; it runs again later`,
      options,
    );
  }
}

/** A worker lease was used with a package of another execution. */
export class LeaseMismatchError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly leaseExecutionId: string,
  ) {
    super(
      LocalErrorCodes.LeaseMismatch,
      `execution "${executionId}": the worker lease was allocated for execution "${leaseExecutionId}"`,
    );
  }
}

/**
 * A queue slot this node holds lapsed before it was renewed (the node stalled past the TTL):
 * another node may now run the execution, or hold the capacity; the run here goes on until its
 * next write meets a newer fence.
 */
export class QueueSlotLapsedError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly queue: string,
  ) {
    super(
      LocalErrorCodes.QueueSlotLapsed,
      `execution "${executionId}": its slot in queue "${queue}" lapsed before it was renewed`,
    );
  }
}
/** A `StoreTransport`, an `OutboxPublisher` or an outbox runtime was given stores without an outbox. */
export class OutboxMissingError extends SkeinError {
  constructor(readonly where: string) {
    super(
      LocalErrorCodes.OutboxMissing,
      `${where}: the stores have no outbox (stores.outbox); every store of @skein/store-sqlite, ` +
        '@skein/store-postgres and openMemoryStores has one',
    );
  }
}

/** A transport or publisher was used after `close()`/`stop()`. */
export class TransportClosedError extends SkeinError {
  constructor(
    readonly transport: string,
    readonly operation: string,
  ) {
    super(LocalErrorCodes.TransportClosed, `${transport} is closed: ${operation} refused`);
  }
}
