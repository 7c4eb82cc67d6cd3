/** The event store's statements, one query per function; each is prepared once per connection. */
import type { ExecutionStatus } from '@skein/workflow-runtime';
import type { ExecutionSummary, StoredEvent } from '@skein/workflow-runtime/spi';
import type Database from 'better-sqlite3';

type Db = Database.Database;

/** The head row of an execution as `checkAppend` needs it. */
export interface HeadRow {
  fence: number;
  lastSeq: number;
  status: ExecutionStatus | null;
  workflow: string | null;
}

// The newest event of the row's execution gives its last seq and when it was written.
const SUMMARY_COLUMNS =
  'x.execution_id AS executionId, x.workflow, x.status, e.seq AS sequence, e.recorded_at AS updatedAt';
const NEWEST_EVENT =
  'JOIN skein_events e ON e.execution_id = x.execution_id AND e.seq = ' +
  '(SELECT max(seq) FROM skein_events m WHERE m.execution_id = x.execution_id)';

/** Fence, last seq, status and workflow of one execution. */
export function selectHead(db: Db): Database.Statement<[string], HeadRow> {
  return db.prepare(
    'SELECT x.fence, coalesce((SELECT max(seq) FROM skein_events e WHERE e.execution_id = x.execution_id), -1) ' +
      'AS lastSeq, x.status, x.workflow FROM skein_executions x WHERE x.execution_id = ?',
  );
}

/** Insert one event: execution id, seq, envelope id, type, payload, fence, recorded at. */
export function insertEvent(
  db: Db,
): Database.Statement<[string, number, string, string, string, number, number]> {
  return db.prepare(
    'INSERT INTO skein_events (execution_id, seq, envelope_id, type, payload, fence, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
}

/** Set the head when seq 0 is written or the status changes: id, workflow (kept once set), status. */
export function upsertHead(db: Db): Database.Statement<[string, string, string]> {
  return db.prepare(
    'INSERT INTO skein_executions (execution_id, workflow, status) VALUES (?, ?, ?) ' +
      'ON CONFLICT (execution_id) DO UPDATE SET workflow = coalesce(skein_executions.workflow, excluded.workflow), ' +
      'status = excluded.status',
  );
}

/**
 * Set the status of an execution whose seq 0 exists: id, status. It names only the status, so
 * SQLite rewrites only the indexes that hold it (the workflow index stays untouched).
 */
export function updateStatus(db: Db): Database.Statement<[string, string]> {
  return db.prepare('UPDATE skein_executions SET status = ? WHERE execution_id = ?');
}

/** Take the next fence in one statement; works before seq 0 exists. */
export function nextFence(db: Db): Database.Statement<[string], number> {
  return db
    .prepare<[string], number>(
      'INSERT INTO skein_executions (execution_id, fence) VALUES (?, 1) ' +
        'ON CONFLICT (execution_id) DO UPDATE SET fence = skein_executions.fence + 1 RETURNING fence',
    )
    .pluck();
}

/** The next fence of one execution, only while it is pending; undefined otherwise. */
export function nextPendingFence(db: Db): Database.Statement<[string], number> {
  return db
    .prepare<[string], number>(
      "UPDATE skein_executions SET fence = fence + 1 WHERE execution_id = ? AND status = 'pending' RETURNING fence",
    )
    .pluck();
}

/** The newest fence of one execution. */
export function selectFence(db: Db): Database.Statement<[string], number> {
  return db.prepare<[string], number>('SELECT fence FROM skein_executions WHERE execution_id = ?').pluck();
}

/** Events of one execution from a seq, at most a limit (-1: no limit). */
export function selectEvents(db: Db): Database.Statement<[string, number, number], StoredEvent> {
  return db.prepare(
    'SELECT execution_id AS executionId, seq, envelope_id AS envelopeId, type, payload, fence, recorded_at AS recordedAt ' +
      'FROM skein_events WHERE execution_id = ? AND seq >= ? ORDER BY seq LIMIT ?',
  );
}

/** The index row of one execution once seq 0 exists. */
export function selectExecution(db: Db): Database.Statement<[string], ExecutionSummary> {
  return db.prepare(
    `SELECT ${SUMMARY_COLUMNS} FROM skein_executions x ${NEWEST_EVENT} WHERE x.execution_id = ?`,
  );
}

/** A page of every started execution after an id. */
export function listAll(db: Db): Database.Statement<[string, number], ExecutionSummary> {
  return db.prepare(
    `SELECT ${SUMMARY_COLUMNS} FROM skein_executions x ${NEWEST_EVENT} ` +
      'WHERE x.execution_id > ? AND x.status IS NOT NULL ORDER BY x.execution_id LIMIT ?',
  );
}

/** A page of one status after an id (index skein_executions_status). */
export function listByStatus(db: Db): Database.Statement<[string, string, number], ExecutionSummary> {
  return db.prepare(
    `SELECT ${SUMMARY_COLUMNS} FROM skein_executions x ${NEWEST_EVENT} ` +
      'WHERE x.status = ? AND x.execution_id > ? ORDER BY x.execution_id LIMIT ?',
  );
}

/** A page of one workflow after an id (index skein_executions_workflow). */
export function listByWorkflow(db: Db): Database.Statement<[string, string, number], ExecutionSummary> {
  return db.prepare(
    `SELECT ${SUMMARY_COLUMNS} FROM skein_executions x ${NEWEST_EVENT} ` +
      'WHERE x.workflow = ? AND x.execution_id > ? ORDER BY x.execution_id LIMIT ?',
  );
}

/** A page of one workflow in one status after an id (index skein_executions_workflow_status). */
export function listByWorkflowAndStatus(
  db: Db,
): Database.Statement<[string, string, string, number], ExecutionSummary> {
  return db.prepare(
    `SELECT ${SUMMARY_COLUMNS} FROM skein_executions x ${NEWEST_EVENT} ` +
      'WHERE x.workflow = ? AND x.status = ? AND x.execution_id > ? ORDER BY x.execution_id LIMIT ?',
  );
}
