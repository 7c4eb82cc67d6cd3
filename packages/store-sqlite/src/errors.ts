/** Errors of the SQLite store. Log-level refusals are the shared ones of `@skein/workflow-runtime`. */
import { SkeinError } from '@skein/workflow-runtime';

/** Stable codes of the errors of this package, by class (without the `Error` suffix). */
export const SqliteErrorCodes = {
  Migration: 'SQLITE_MIGRATION_FAILED',
  StoreClosed: 'SQLITE_STORE_CLOSED',
  InvalidSqliteOption: 'SQLITE_INVALID_OPTION',
} as const;

/** One of {@link SqliteErrorCodes}. */
export type SqliteErrorCode = (typeof SqliteErrorCodes)[keyof typeof SqliteErrorCodes];

/** A migration file is misnamed, failed to apply, or the database is newer than this library. */
export class MigrationError extends SkeinError {
  constructor(
    readonly path: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(SqliteErrorCodes.Migration, `SQLite database ${path}: migration refused: ${reason}`, options);
  }
}

/** The stores were closed; the call was refused before touching the database. */
export class StoreClosedError extends SkeinError {
  constructor(
    readonly path: string,
    readonly operation: string,
  ) {
    super(SqliteErrorCodes.StoreClosed, `SQLite database ${path}: ${operation} after close()`);
  }
}

/** An option of `openSqliteStores` is out of range; nothing was opened. */
export class InvalidSqliteOptionError extends SkeinError {
  constructor(
    readonly option: string,
    readonly reason: string,
  ) {
    super(SqliteErrorCodes.InvalidSqliteOption, `openSqliteStores: option ${option} ${reason}`);
  }
}
