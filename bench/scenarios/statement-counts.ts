/**
 * Statements, commits and rows per workflow and per step, for Skein and DBOS (issue #8).
 *
 * PostgreSQL: statements are counted in this process (every `pg` query call to the engine's
 * database); commits and rows come from the server's `pg_stat_database` (xact_commit — read-only
 * transactions included — tup_inserted, tup_updated, tup_deleted) of the engine's own database.
 * Those server counters are only complete once the engine's connections have ended, so each
 * count is a whole lifecycle (open, run N workflows one after another, close) minus an idle
 * lifecycle of the same length (open, wait, close), which removes start-up, shutdown and
 * background polling. SQLite: the better-sqlite3 statements Skein executes, counted in process
 * around the N runs (nothing runs in the background there).
 */
import { join } from 'node:path';
import { countPgStatements, pgStatementsSent } from '../counting/pg-statements.js';
import { countSqliteStatements, sqliteCounts } from '../counting/sqlite-statements.js';
import { type EngineSpec, SHAPES, type Shape } from '../engines/engine.js';
import { withEngine, withTarget } from '../engines/lifecycle.js';
import { databaseCounters } from '../engines/pg-admin.js';
import { nowMs } from '../measure.js';

/** Per-workflow counts of one engine on one shape. */
export interface Counts {
  engine: string;
  shape: Shape;
  statements: number;
  commits: number;
  inserted: number;
  updated: number;
  deleted: number;
}

type Totals = Omit<Counts, 'engine' | 'shape'>;

const minus = (a: Totals, b: Totals): Totals => ({
  statements: a.statements - b.statements,
  commits: a.commits - b.commits,
  inserted: a.inserted - b.inserted,
  updated: a.updated - b.updated,
  deleted: a.deleted - b.deleted,
});
const per = (t: Totals, n: number): Totals => ({
  statements: t.statements / n,
  commits: t.commits / n,
  inserted: t.inserted / n,
  updated: t.updated / n,
  deleted: t.deleted / n,
});

async function pgTotals(database: string): Promise<Totals> {
  const server = await databaseCounters(database);
  return { statements: pgStatementsSent(database), ...server };
}

/** One lifecycle on `shape`: run `runs` workflows, or (runs = 0) stay idle for `idleMs`; returns the deltas and its length. */
async function pgLifecycle(
  spec: EngineSpec,
  target: { dir: string; pgUrl?: string; database?: string },
  shape: Shape,
  runs: number,
  idleMs: number,
): Promise<{ delta: Totals; ms: number }> {
  const database = target.database!;
  const before = await pgTotals(database);
  const start = nowMs();
  await withEngine(spec, target, async (engine) => {
    const run = await engine.prepare(shape);
    for (let i = 0; i < runs; i++) await run(i);
    if (runs === 0) await new Promise((resolve) => setTimeout(resolve, idleMs));
  });
  const ms = nowMs() - start;
  return { delta: minus(await pgTotals(database), before), ms };
}

/** Per-workflow counts of a PostgreSQL engine, for every shape. */
export async function countPostgres(spec: EngineSpec, runs: number): Promise<Counts[]> {
  countPgStatements();
  return withTarget(spec, async (target) => {
    await pgLifecycle(spec, target, 0, 1, 0); // creates the engine's tables
    const out: Counts[] = [];
    for (const shape of SHAPES) {
      const busy = await pgLifecycle(spec, target, shape, runs, 0);
      const idle = await pgLifecycle(spec, target, shape, 0, busy.ms);
      out.push({ engine: spec.name, shape, ...per(minus(busy.delta, idle.delta), runs) });
    }
    return out;
  });
}

/** Per-workflow counts of a SQLite engine, for every shape. */
export async function countSqlite(spec: EngineSpec, runs: number): Promise<Counts[]> {
  countSqliteStatements();
  return withTarget(spec, (target) =>
    withEngine(spec, target, async (engine) => {
      const file = join(target.dir, 'skein.db');
      const out: Counts[] = [];
      for (const shape of SHAPES) {
        const run = await engine.prepare(shape);
        await run(-1); // warm the statement cache
        const before = sqliteCounts(file);
        for (let i = 0; i < runs; i++) await run(i);
        await new Promise((resolve) => setTimeout(resolve, 20)); // let trailing work land
        const after = sqliteCounts(file);
        out.push({ engine: spec.name, shape, ...per(minus(after, before), runs) });
      }
      return out;
    }),
  );
}

const f = (n: number) => (Math.abs(n) >= 100 ? n.toFixed(0) : n.toFixed(2));

/** The markdown table: per workflow for each shape, then the marginal cost of one step. */
export function countsTable(counts: readonly Counts[]): string {
  const lines = [
    '| engine | steps | statements | commits | rows inserted | rows updated | rows deleted |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const c of counts) {
    lines.push(
      `| ${c.engine} | ${c.shape} | ${[c.statements, c.commits, c.inserted, c.updated, c.deleted].map(f).join(' | ')} |`,
    );
  }
  for (const engine of new Set(counts.map((c) => c.engine))) {
    const ten = counts.find((c) => c.engine === engine && c.shape === 10);
    const zero = counts.find((c) => c.engine === engine && c.shape === 0);
    if (ten === undefined || zero === undefined) continue;
    const step = per(minus(ten, zero), 10);
    lines.push(
      `| ${engine} | per step ((10) - (0)) / 10 | ${[step.statements, step.commits, step.inserted, step.updated, step.deleted].map(f).join(' | ')} |`,
    );
  }
  return lines.join('\n');
}
