/** Errors of the PostgreSQL store. Log-level refusals are the shared ones of `@skein/workflow-runtime`. */
import { SkeinError } from '@skein/workflow-runtime';

/** Stable codes of the errors of this package, by class (without the `Error` suffix). */
export const PostgresErrorCodes = {
  Migration: 'POSTGRES_MIGRATION_FAILED',
  StoreClosed: 'POSTGRES_STORE_CLOSED',
  InvalidPostgresOption: 'POSTGRES_INVALID_OPTION',
  NulInText: 'POSTGRES_NUL_IN_TEXT',
  InvalidWakeupChannel: 'POSTGRES_INVALID_CHANNEL',
  UnexpectedAppendResult: 'POSTGRES_UNEXPECTED_APPEND_RESULT',
} as const;

/** One of {@link PostgresErrorCodes}. */
export type PostgresErrorCode = (typeof PostgresErrorCodes)[keyof typeof PostgresErrorCodes];

/** A migration file is misnamed, failed to apply, or the schema is newer than this library. */
export class MigrationError extends SkeinError {
  constructor(
    readonly schema: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(
      PostgresErrorCodes.Migration,
      `PostgreSQL schema "${schema}": migration refused: ${reason}`,
      options,
    );
  }
}

/** The stores were closed; the call was refused before touching the database. */
export class StoreClosedError extends SkeinError {
  constructor(
    readonly schema: string,
    readonly operation: string,
  ) {
    super(PostgresErrorCodes.StoreClosed, `PostgreSQL schema "${schema}": ${operation} after close()`);
  }
}

/** An option of `openPostgresStores` is missing or out of range; nothing was opened. */
export class InvalidPostgresOptionError extends SkeinError {
  constructor(
    readonly option: string,
    readonly reason: string,
  ) {
    super(PostgresErrorCodes.InvalidPostgresOption, `openPostgresStores: option ${option} ${reason}`);
  }
}

/**
 * A text value holds U+0000, which PostgreSQL `text` cannot store. Refused before anything is
 * written. Payloads encoded by Skein's codec never hold a raw U+0000 (JSON escapes it).
 */
export class NulInTextError extends SkeinError {
  /**
   * @param executionId the execution the value belongs to; `undefined` when it belongs to none
   *   (a lease, a timer claim's owner).
   * @param field which value, e.g. `the timer id`.
   * @param operation the store call that refused it, e.g. `timers.schedule` (default: unnamed,
   *   as in the event store's own refusals).
   */
  constructor(
    readonly executionId: string | undefined,
    readonly field: string,
    readonly operation?: string,
  ) {
    const call = operation === undefined ? '' : `${operation}: `;
    const execution =
      executionId === undefined ? '' : `execution "${executionId.replaceAll('\u0000', '\\u0000')}": `;
    super(
      PostgresErrorCodes.NulInText,
      `${call}${execution}${field} contains U+0000, which PostgreSQL text cannot store`,
    );
  }
}

/** An argument of a wake-up call is not usable (a channel name that is not a plain identifier). */
export class InvalidWakeupChannelError extends SkeinError {
  constructor(
    readonly channel: string,
    readonly reason: string,
  ) {
    super(PostgresErrorCodes.InvalidWakeupChannel, `wake-up channel "${channel}": ${reason}`);
  }
}

/** The database answered an append in a way the store cannot map; a defect, never a refusal. */
export class UnexpectedAppendResultError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly reason: string,
  ) {
    super(PostgresErrorCodes.UnexpectedAppendResult, `execution "${executionId}": ${reason}`);
  }
}

/** A `pg` error as far as the stores read it: the SQLSTATE and, for a constraint, its name. */
interface PgError extends Error {
  code: string;
  constraint?: string;
}

/** True for PostgreSQL's unique violation (SQLSTATE 23505). */
export function isUniqueViolation(error: unknown): error is PgError {
  return error instanceof Error && (error as Partial<PgError>).code === '23505';
}

/** True for PostgreSQL's deadlock_detected (SQLSTATE 40P01): the statement was rolled back. */
export function isDeadlock(error: unknown): boolean {
  return error instanceof Error && (error as Partial<PgError>).code === '40P01';
}

/**
 * For a grouped short statement that failed: a unique violation or a deadlock aborted it
 * whole, so nothing of it was written (false), and each request then runs alone, where the
 * full statement says whose the conflict was. Any other error propagates.
 */
export function notWrittenInBatch(error: unknown): false {
  if (isUniqueViolation(error) || isDeadlock(error)) return false;
  throw error;
}
