/**
 * The executor's own SQLite file (docs/executors.md): the runs it accepted, each under the
 * binding that accepted it, and the result it chose for each, until the hub acknowledges it.
 * One connection (better-sqlite3, WAL), numbered migrations in `migrations/`, one statement
 * per named query. Node-only.
 */
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ExecutorStateError } from '../errors.js';

/** The session that accepted a run: the hub's incarnation and the session id it gave. */
export interface Binding {
  incarnation: string;
  sessionId: string;
}

/** A run as the hub handed it out and the executor accepted it. */
export interface AcceptedRun {
  executionId: string;
  fence: number;
  workflow: string;
  version?: number | undefined;
  /** The codec's JSON of the input. */
  input: string;
  binding: Binding;
  transactionId: string;
  acceptedAt: number;
  dueAt: number;
}

/** The terminal result of a run, chosen once. */
export interface ChosenResult {
  outcome: 'completed' | 'failed';
  /** The codec's JSON of the output (completed) or the error (failed). */
  result: string;
  exitCode: number;
  exitMessage: string;
  chosenAt: number;
}

/** A row of the file as stored; `binding` is null for a row with no binding. */
export interface RetainedRow {
  executionId: string;
  fence: number;
  workflow: string;
  version: number | null;
  input: string | null;
  binding: Binding | null;
  transactionId: string;
  acceptedAt: number;
  dueAt: number;
  startedAt: number | null;
  chosen: ChosenResult | null;
  attempts: number;
  refused: string | null;
  lastDiagnostic: string | null;
}

/** How many rows a new session finds: runs it may not touch, and results not yet acknowledged. */
export interface StateCounts {
  /** Rows of earlier sessions (or with no binding) without a result: never started nor deleted here. */
  quarantined: number;
  /** Results chosen and neither acknowledged nor refused. */
  unreconciled: number;
}

/** The longest last diagnostic kept, in characters. */
export const MAX_DIAGNOSTIC_CHARS = 1024;

/** The database file inside a state directory. */
export const STATE_FILE = 'executor.db';

interface Row {
  execution_id: string;
  fence: number;
  workflow: string;
  version: number | null;
  input: string | null;
  hub_incarnation: string | null;
  session_id: string | null;
  transaction_id: string;
  accepted_at: number;
  due_at: number;
  started_at: number | null;
  outcome: 'completed' | 'failed' | null;
  result: string | null;
  exit_code: number | null;
  exit_message: string | null;
  chosen_at: number | null;
  attempts: number;
  refused: string | null;
  last_diagnostic: string | null;
}

type Db = Database.Database;

/** The retained runs of one executor. */
export class RetainedStore {
  private readonly db: Db;

  private constructor(db: Db) {
    this.db = db;
  }

  /**
   * Open (or create) the state directory of executor `executorId` built as `packageVersion`.
   * A directory that holds another executor's or another version's runs is refused with
   * `ExecutorStateError` before anything is written (E6).
   */
  static open(stateDir: string, executorId: string, packageVersion: string, now = Date.now()): RetainedStore {
    mkdirSync(stateDir, { recursive: true });
    const db = new Database(join(stateDir, STATE_FILE), { timeout: 5_000 });
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      migrate(db, now);
      claimIdentity(db, stateDir, { executor_id: executorId, package_version: packageVersion });
      return new RetainedStore(db);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  /** Record an accepted run under its binding; false when the run (id and fence) is already here. */
  accept(run: AcceptedRun): boolean {
    const inserted = this.db
      .prepare(
        'INSERT INTO executor_runs (execution_id, fence, workflow, version, input, hub_incarnation, session_id, ' +
          'transaction_id, accepted_at, due_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
      )
      .run(
        run.executionId,
        run.fence,
        run.workflow,
        run.version ?? null,
        run.input,
        run.binding.incarnation,
        run.binding.sessionId,
        run.transactionId,
        run.acceptedAt,
        run.dueAt,
      );
    return inserted.changes === 1;
  }

  /** Set the start marker of a run, once. */
  markStarted(executionId: string, fence: number, at: number): void {
    this.db
      .prepare(
        'UPDATE executor_runs SET started_at = ? WHERE execution_id = ? AND fence = ? AND started_at IS NULL',
      )
      .run(at, executionId, fence);
  }

  /**
   * Keep `chosen` as the run's result, unless one was chosen before (a result is chosen once);
   * returns the result the row holds now.
   */
  choose(executionId: string, fence: number, chosen: ChosenResult): ChosenResult | null {
    this.db
      .prepare(
        'UPDATE executor_runs SET outcome = ?, result = ?, exit_code = ?, exit_message = ?, chosen_at = ? ' +
          'WHERE execution_id = ? AND fence = ? AND chosen_at IS NULL',
      )
      .run(
        chosen.outcome,
        chosen.result,
        chosen.exitCode,
        chosen.exitMessage,
        chosen.chosenAt,
        executionId,
        fence,
      );
    return this.get(executionId, fence)?.chosen ?? null;
  }

  /** Count one delivery attempt and keep its diagnostic (bounded). */
  recordAttempt(executionId: string, fence: number, diagnostic: string | null): void {
    this.db
      .prepare(
        'UPDATE executor_runs SET attempts = attempts + 1, last_diagnostic = coalesce(?, last_diagnostic) ' +
          'WHERE execution_id = ? AND fence = ?',
      )
      .run(bounded(diagnostic), executionId, fence);
  }

  /** A refusal the hub would only repeat: record its cause; the row leaves the delivery set. */
  refuse(executionId: string, fence: number, cause: string, diagnostic: string): void {
    this.db
      .prepare(
        'UPDATE executor_runs SET refused = ?, last_diagnostic = ? WHERE execution_id = ? AND fence = ?',
      )
      .run(cause, bounded(diagnostic), executionId, fence);
  }

  /** The hub acknowledged the result: release the row. */
  release(executionId: string, fence: number): void {
    this.db
      .prepare('DELETE FROM executor_runs WHERE execution_id = ? AND fence = ? AND outcome IS NOT NULL')
      .run(executionId, fence);
  }

  /** One run, or null. */
  get(executionId: string, fence: number): RetainedRow | null {
    const row = this.db
      .prepare<[string, number], Row>('SELECT * FROM executor_runs WHERE execution_id = ? AND fence = ?')
      .get(executionId, fence);
    return row === undefined ? null : toRetained(row);
  }

  /** The rows of one execution, newest fence first. */
  rowsOf(executionId: string): RetainedRow[] {
    return this.db
      .prepare<[string], Row>('SELECT * FROM executor_runs WHERE execution_id = ? ORDER BY fence DESC')
      .all(executionId)
      .map(toRetained);
  }

  /**
   * Results that may still be delivered (chosen, not refused), oldest choice first, at most
   * `limit`, leaving out those in `busy` (being delivered by someone else).
   */
  deliverable(limit: number, busy: ReadonlySet<string>): RetainedRow[] {
    const rows: RetainedRow[] = [];
    const statement = this.db.prepare<[], Row>(
      'SELECT * FROM executor_runs WHERE outcome IS NOT NULL AND refused IS NULL AND hub_incarnation IS NOT NULL ' +
        'AND session_id IS NOT NULL ORDER BY chosen_at, execution_id',
    );
    for (const row of statement.iterate()) {
      if (busy.has(runKey(row.execution_id, row.fence))) continue;
      rows.push(toRetained(row));
      if (rows.length >= limit) break;
    }
    return rows;
  }

  /** What a new session under `current` finds (logged at startup). */
  counts(current: Binding): StateCounts {
    const quarantined = this.db
      .prepare<[string, string], number>(
        'SELECT count(*) FROM executor_runs WHERE outcome IS NULL AND (hub_incarnation IS NULL ' +
          'OR session_id IS NULL OR hub_incarnation <> ? OR session_id <> ?)',
      )
      .pluck()
      .get(current.incarnation, current.sessionId);
    const unreconciled = this.db
      .prepare<[], number>('SELECT count(*) FROM executor_runs WHERE outcome IS NOT NULL AND refused IS NULL')
      .pluck()
      .get();
    return { quarantined: quarantined ?? 0, unreconciled: unreconciled ?? 0 };
  }

  /** Close the file. */
  close(): void {
    this.db.close();
  }

  /** True while the file is open. */
  get open(): boolean {
    return this.db.open;
  }
}

/** The key of a run in sets: its execution id and fence. */
export function runKey(executionId: string, fence: number): string {
  return `${fence}:${executionId}`;
}

/** True when `row` was accepted by exactly the session `binding`. */
export function boundTo(row: RetainedRow, binding: Binding): boolean {
  return row.binding?.incarnation === binding.incarnation && row.binding.sessionId === binding.sessionId;
}

function toRetained(row: Row): RetainedRow {
  const binding =
    row.hub_incarnation === null || row.session_id === null
      ? null
      : { incarnation: row.hub_incarnation, sessionId: row.session_id };
  const chosen =
    row.outcome === null || row.chosen_at === null
      ? null
      : {
          outcome: row.outcome,
          result: row.result ?? 'null',
          exitCode: row.exit_code ?? 0,
          exitMessage: row.exit_message ?? '',
          chosenAt: row.chosen_at,
        };
  return {
    executionId: row.execution_id,
    fence: row.fence,
    workflow: row.workflow,
    version: row.version,
    input: row.input,
    binding,
    transactionId: row.transaction_id,
    acceptedAt: row.accepted_at,
    dueAt: row.due_at,
    startedAt: row.started_at,
    chosen,
    attempts: row.attempts,
    refused: row.refused,
    lastDiagnostic: row.last_diagnostic,
  };
}

function bounded(text: string | null): string | null {
  return text === null || text.length <= MAX_DIAGNOSTIC_CHARS
    ? text
    : `${text.slice(0, MAX_DIAGNOSTIC_CHARS - 1)}…`;
}

/** Apply the migrations the file lacks, in one transaction. */
function migrate(db: Db, now: number): void {
  const dir = new URL('./migrations/', import.meta.url);
  const files = readdirSync(dir)
    .filter((file) => /^\d{4}_[a-z0-9_]+\.sql$/.test(file))
    .sort();
  db.transaction(() => {
    const known =
      db
        .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'executor_migrations'")
        .get() !== undefined;
    const done = new Set(
      known ? db.prepare<[], number>('SELECT id FROM executor_migrations').pluck().all() : [],
    );
    for (const file of files) {
      const id = Number(file.slice(0, 4));
      if (done.has(id)) continue;
      db.exec(readFileSync(new URL(file, dir), 'utf8'));
      db.prepare('INSERT INTO executor_migrations (id, name, applied_at) VALUES (?, ?, ?)').run(
        id,
        file.slice(5, -4),
        now,
      );
    }
  }).immediate();
}

/** Record who owns the directory, or refuse when it is someone else (E6). */
function claimIdentity(
  db: Db,
  stateDir: string,
  identity: Record<'executor_id' | 'package_version', string>,
): void {
  db.transaction(() => {
    for (const [key, value] of Object.entries(identity)) {
      const stored = db
        .prepare<[string], string>('SELECT value FROM executor_meta WHERE key = ?')
        .pluck()
        .get(key);
      if (stored === undefined) {
        db.prepare('INSERT INTO executor_meta (key, value) VALUES (?, ?)').run(key, value);
      } else if (stored !== value) {
        throw new ExecutorStateError(stateDir, key, stored, value);
      }
    }
  }).immediate();
}
