/**
 * {@link ScheduleStore} on PostgreSQL: each save is one compare-and-set statement. A name
 * holding U+0000 is refused with `NulInTextError` by `save`.
 */
import type { ScheduleState } from '@skein/workflow-runtime';
import type { ScheduleStore } from '@skein/workflow-runtime/spi';
import type { Database, Query } from './database.js';
import { hasNul, refuseNul } from './nul-text.js';

interface Row {
  name: string;
  nextDueAt: number;
  paused: boolean;
  revision: number;
  lastExecutionId: string | null;
  bufferedDueAt: number | null;
}

/** Schedule state in PostgreSQL, with the semantics of `MemoryScheduleStore`. */
export class PostgresScheduleStore implements ScheduleStore {
  /** @param db the shared pool, with the schema migrated (see `openPostgresStores`). */
  constructor(private readonly db: Database) {}

  async get(name: string): Promise<ScheduleState | null> {
    if (hasNul(name)) return null;
    const row = (await this.db.query<Row>('schedules.get', selectSchedule(name))).rows[0];
    return row === undefined ? null : toState(row);
  }

  async save(expected: number | null, state: ScheduleState): Promise<boolean> {
    refuseNul('schedules.save', state.lastExecutionId, { 'the schedule name': state.name });
    const result = await this.db.query('schedules.save', saveSchedule(expected, state));
    return (result.rowCount ?? 0) === 1;
  }
}

function toState(row: Row): ScheduleState {
  const state: ScheduleState = {
    name: row.name,
    nextDueAt: row.nextDueAt,
    paused: row.paused,
    revision: row.revision,
  };
  if (row.lastExecutionId !== null) state.lastExecutionId = row.lastExecutionId;
  if (row.bufferedDueAt !== null) state.bufferedDueAt = row.bufferedDueAt;
  return state;
}

function selectSchedule(name: string): Query {
  return {
    name: 'skein_schedule_get',
    text:
      'SELECT name, next_due_at AS "nextDueAt", paused, revision, last_execution_id AS "lastExecutionId", ' +
      'buffered_due_at AS "bufferedDueAt" FROM skein_schedules WHERE name = $1',
    values: [name],
  };
}

/** Insert the first row (expected null) or update the row still at revision `expected`. */
function saveSchedule(expected: number | null, state: ScheduleState): Query {
  const values = [
    state.name,
    state.nextDueAt,
    state.paused,
    state.revision,
    state.lastExecutionId ?? null,
    state.bufferedDueAt ?? null,
  ];
  if (expected === null)
    return {
      name: 'skein_schedule_insert',
      text:
        'INSERT INTO skein_schedules (name, next_due_at, paused, revision, last_execution_id, buffered_due_at) ' +
        'VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING',
      values,
    };
  return {
    name: 'skein_schedule_update',
    text:
      'UPDATE skein_schedules SET next_due_at = $2, paused = $3, revision = $4, last_execution_id = $5, ' +
      'buffered_due_at = $6 WHERE name = $1 AND revision = $7',
    values: [...values, expected],
  };
}
