/**
 * Counts the statements each database receives from this process, by wrapping
 * `pg.Client.prototype.query` (Skein's store and DBOS both use `pg`, the same copy). Every call
 * is one statement sent to the server, BEGIN and COMMIT included; `pool.query` goes through it too.
 */
import pg from 'pg';

const sent = new Map<string, number>();
let installed = false;

/** Start counting (once per process; later calls do nothing). */
export function countPgStatements(): void {
  if (installed) return;
  installed = true;
  const original = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  const counted = function (this: pg.Client, ...args: unknown[]): unknown {
    const database = this.database ?? '';
    sent.set(database, (sent.get(database) ?? 0) + 1);
    return original.apply(this, args);
  };
  pg.Client.prototype.query = counted as typeof pg.Client.prototype.query;
}

/** Statements sent so far to `database` by this process. */
export function pgStatementsSent(database: string): number {
  return sent.get(database) ?? 0;
}
