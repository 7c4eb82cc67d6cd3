/** Errors of the PostgreSQL store. Log-level refusals are the shared ones of `@skein/workflow-runtime`. */
import { SkeinError } from '@skein/workflow-runtime';

/** A migration file is misnamed, failed to apply, or the schema is newer than this library. */
export class MigrationError extends SkeinError {
  constructor(
    readonly schema: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(
      'POSTGRES_MIGRATION_FAILED',
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
    super('POSTGRES_STORE_CLOSED', `PostgreSQL schema "${schema}": ${operation} after close()`);
  }
}

/** An option of `openPostgresStores` is missing or out of range; nothing was opened. */
export class InvalidPostgresOptionError extends SkeinError {
  constructor(
    readonly option: string,
    readonly reason: string,
  ) {
    super('POSTGRES_INVALID_OPTION', `openPostgresStores: option ${option} ${reason}`);
  }
}

/**
 * A text value holds U+0000, which PostgreSQL `text` cannot store. Refused before anything is
 * written. Payloads encoded by Skein's codec never hold a raw U+0000 (JSON escapes it).
 */
export class NulInTextError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly field: string,
  ) {
    super(
      'POSTGRES_NUL_IN_TEXT',
      `execution "${executionId.replaceAll('\u0000', '\\u0000')}": ${field} contains U+0000, which PostgreSQL text cannot store`,
    );
  }
}

/** An argument of a wake-up call is not usable (a channel name that is not a plain identifier). */
export class InvalidWakeupChannelError extends SkeinError {
  constructor(
    readonly channel: string,
    readonly reason: string,
  ) {
    super('POSTGRES_INVALID_CHANNEL', `wake-up channel "${channel}": ${reason}`);
  }
}

/** The database answered an append in a way the store cannot map; a defect, never a refusal. */
export class UnexpectedAppendResultError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly reason: string,
  ) {
    super('POSTGRES_UNEXPECTED_APPEND_RESULT', `execution "${executionId}": ${reason}`);
  }
}
