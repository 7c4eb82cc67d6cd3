/** {@link ScheduleStore} on SQLite: each save is one compare-and-set statement. */
import type { ScheduleState } from '@skein/workflow-runtime';
import type { ScheduleStore } from '@skein/workflow-runtime/spi';
import type Database from 'better-sqlite3';

type Db = Database.Database;

interface Row {
  name: string;
  nextDueAt: number;
  paused: number;
  revision: number;
  lastExecutionId: string | null;
  bufferedDueAt: number | null;
}

interface Bound {
  name: string;
  nextDueAt: number;
  paused: number;
  revision: number;
  lastExecutionId: string | null;
  bufferedDueAt: number | null;
  expected: number | null;
}

/** Schedule state in SQLite, with the semantics of `MemoryScheduleStore`. */
export class SqliteScheduleStore implements ScheduleStore {
  private readonly statements: ReturnType<typeof prepare>;

  /** @param db an open connection with the schema migrated (see `openSqliteStores`). */
  constructor(db: Db) {
    this.statements = prepare(db);
  }

  async get(name: string): Promise<ScheduleState | null> {
    const row = this.statements.get.get(name);
    return row === undefined ? null : toState(row);
  }

  async save(expected: number | null, state: ScheduleState): Promise<boolean> {
    const bound: Bound = {
      name: state.name,
      nextDueAt: state.nextDueAt,
      paused: state.paused ? 1 : 0,
      revision: state.revision,
      lastExecutionId: state.lastExecutionId ?? null,
      bufferedDueAt: state.bufferedDueAt ?? null,
      expected,
    };
    const statement = expected === null ? this.statements.insert : this.statements.update;
    return statement.run(bound).changes === 1;
  }
}

function toState(row: Row): ScheduleState {
  const state: ScheduleState = {
    name: row.name,
    nextDueAt: row.nextDueAt,
    paused: row.paused === 1,
    revision: row.revision,
  };
  if (row.lastExecutionId !== null) state.lastExecutionId = row.lastExecutionId;
  if (row.bufferedDueAt !== null) state.bufferedDueAt = row.bufferedDueAt;
  return state;
}

function prepare(db: Db) {
  return {
    get: db.prepare<[string], Row>(
      'SELECT name, next_due_at AS nextDueAt, paused, revision, last_execution_id AS lastExecutionId, ' +
        'buffered_due_at AS bufferedDueAt FROM skein_schedules WHERE name = ?',
    ),
    insert: db.prepare<Bound>(
      'INSERT INTO skein_schedules (name, next_due_at, paused, revision, last_execution_id, buffered_due_at) ' +
        'VALUES (@name, @nextDueAt, @paused, @revision, @lastExecutionId, @bufferedDueAt) ON CONFLICT DO NOTHING',
    ),
    update: db.prepare<Bound>(
      'UPDATE skein_schedules SET next_due_at = @nextDueAt, paused = @paused, revision = @revision, ' +
        'last_execution_id = @lastExecutionId, buffered_due_at = @bufferedDueAt WHERE name = @name AND revision = @expected',
    ),
  };
}
