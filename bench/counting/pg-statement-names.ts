/**
 * Counts the statements this process sends, by statement name (a named `pg` query's `name`, or
 * the first words of an unnamed one's text), by wrapping `pg.Client.prototype.query`. BEGIN,
 * COMMIT and ROLLBACK count as statements of their own, as they are to the server.
 */
import pg from 'pg';

const sent = new Map<string, number>();
let installed = false;

function nameOf(query: unknown): string {
  if (typeof query === 'string') return query.trim().split(/\s+/, 3).join(' ');
  if (typeof query === 'object' && query !== null) {
    const { name, text } = query as { name?: unknown; text?: unknown };
    if (typeof name === 'string') return name;
    if (typeof text === 'string') return nameOf(text);
  }
  return '(other)';
}

/** Start counting by name (once per process; later calls do nothing). */
export function countPgStatementNames(): void {
  if (installed) return;
  installed = true;
  const original = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  const counted = function (this: pg.Client, ...args: unknown[]): unknown {
    const name = nameOf(args[0]);
    sent.set(name, (sent.get(name) ?? 0) + 1);
    return original.apply(this, args);
  };
  pg.Client.prototype.query = counted as typeof pg.Client.prototype.query;
}

/** The counts so far, by statement name (a copy). */
export function pgStatementsByName(): Map<string, number> {
  return new Map(sent);
}

/** What was sent between two snapshots of `pgStatementsByName`, by name. */
export function statementsBetween(
  before: ReadonlyMap<string, number>,
  after: ReadonlyMap<string, number>,
): Map<string, number> {
  const delta = new Map<string, number>();
  for (const [name, count] of after) {
    const more = count - (before.get(name) ?? 0);
    if (more > 0) delta.set(name, more);
  }
  return delta;
}
