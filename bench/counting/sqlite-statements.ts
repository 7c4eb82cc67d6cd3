/**
 * Counts what better-sqlite3 executes on one database file, by wrapping the statement methods
 * (`run`, `get`, `all`, `iterate`) and `Database#exec`: statements executed, commits (a COMMIT,
 * or a write outside any transaction, which commits on its own) and rows changed (`changes`),
 * by the statement's first word (an `INSERT … ON CONFLICT DO UPDATE` counts as inserted).
 */
import Database from 'better-sqlite3';

/** What one database file has executed so far. */
export interface SqliteCounts {
  statements: number;
  commits: number;
  inserted: number;
  updated: number;
  deleted: number;
}

const counts = new Map<string, SqliteCounts>();
let installed = false;

function countsOf(file: string): SqliteCounts {
  let got = counts.get(file);
  if (got === undefined) {
    got = { statements: 0, commits: 0, inserted: 0, updated: 0, deleted: 0 };
    counts.set(file, got);
  }
  return got;
}

function addChanges(c: SqliteCounts, source: string, changes: number): void {
  const verb = /^\s*(\w+)/.exec(source)?.[1]?.toUpperCase();
  if (verb === 'INSERT' || verb === 'REPLACE') c.inserted += changes;
  else if (verb === 'UPDATE') c.updated += changes;
  else if (verb === 'DELETE') c.deleted += changes;
}

type Method = (this: Database.Statement, ...args: unknown[]) => unknown;

function wrap(original: Method): Method {
  return function (this: Database.Statement, ...args: unknown[]) {
    const db = this.database;
    const before = db.inTransaction;
    const result = original.apply(this, args);
    const c = countsOf(db.name);
    c.statements++;
    const ended = before && !db.inTransaction && /^\s*(COMMIT|END)\b/i.test(this.source);
    const autocommitWrite =
      !before && !db.inTransaction && !this.reader && !/^\s*(BEGIN|ROLLBACK)\b/i.test(this.source);
    if (ended || autocommitWrite) c.commits++;
    const changes = (result as { changes?: number } | undefined)?.changes;
    if (!this.reader && typeof changes === 'number') addChanges(c, this.source, changes);
    return result;
  };
}

/** Start counting (once per process; later calls do nothing). */
export function countSqliteStatements(): void {
  if (installed) return;
  installed = true;
  const probe = new Database(':memory:');
  const proto = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<string, Method>;
  probe.close();
  for (const name of ['run', 'get', 'all', 'iterate']) proto[name] = wrap(proto[name]!);
  const exec = Database.prototype.exec;
  Database.prototype.exec = function (this: Database.Database, source: string) {
    countsOf(this.name).statements++;
    return exec.call(this, source);
  };
}

/** A copy of what `file` has executed so far. */
export function sqliteCounts(file: string): SqliteCounts {
  return { ...countsOf(file) };
}
