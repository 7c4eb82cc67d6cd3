/** Errors of the SQLite store. Log-level refusals are the shared ones of `@skein/workflow-runtime`. */
import { SkeinError } from '@skein/workflow-runtime';

/** A migration file is misnamed, failed to apply, or the database is newer than this library. */
export class MigrationError extends SkeinError {
  constructor(
    readonly path: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super('SQLITE_MIGRATION_FAILED', `SQLite database ${path}: migration refused: ${reason}`, options);
  }
}

/** The stores were closed; the call was refused before touching the database. */
export class StoreClosedError extends SkeinError {
  constructor(
    readonly path: string,
    readonly operation: string,
  ) {
    super('SQLITE_STORE_CLOSED', `SQLite database ${path}: ${operation} after close()`);
  }
}

/** An option of `openSqliteStores` is out of range; nothing was opened. */
export class InvalidSqliteOptionError extends SkeinError {
  constructor(
    readonly option: string,
    readonly reason: string,
  ) {
    super('SQLITE_INVALID_OPTION', `openSqliteStores: option ${option} ${reason}`);
  }
}
