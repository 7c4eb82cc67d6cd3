/** The event store's statements, one query per function; each is prepared once per connection. */
import type { ExecutionStatus, ExecutionSummary, StoredEvent } from '@skein/workflow-runtime';
import type Database from 'better-sqlite3';

type Db = Database.Database;

/** The head row of an execution as `checkAppend` needs it. */
export interface HeadRow {
  fence: number;
  lastSeq: number;
  status: ExecutionStatus | null;
  workflow: string | null;
}

const SUMMARY_COLUMNS =
  'execution_id AS executionId, workflow, status, last_seq AS sequence, updated_at AS updatedAt';

/** Fence, last seq, status and workflow of one execution. */
export function selectHead(db: Db): Database.Statement<[string], HeadRow> {
  return db.prepare(
    'SELECT fence, last_seq AS lastSeq, status, workflow FROM skein_executions WHERE execution_id = ?',
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

/** Move the head after an append: id, workflow (kept once set), status, last seq, updated at. */
export function upsertHead(db: Db): Database.Statement<[string, string, string, number, number]> {
  return db.prepare(
    'INSERT INTO skein_executions (execution_id, workflow, status, last_seq, updated_at) VALUES (?, ?, ?, ?, ?) ' +
      'ON CONFLICT (execution_id) DO UPDATE SET workflow = coalesce(skein_executions.workflow, excluded.workflow), ' +
      'status = excluded.status, last_seq = excluded.last_seq, updated_at = excluded.updated_at',
  );
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
    `SELECT ${SUMMARY_COLUMNS} FROM skein_executions WHERE execution_id = ? AND last_seq >= 0`,
  );
}

/** A page of every started execution after an id. */
export function listAll(db: Db): Database.Statement<[string, number], ExecutionSummary> {
  return db.prepare(
    `SELECT ${SUMMARY_COLUMNS} FROM skein_executions WHERE execution_id > ? AND last_seq >= 0 ORDER BY execution_id LIMIT ?`,
  );
}

/** A page of one status after an id (index skein_executions_status). */
export function listByStatus(db: Db): Database.Statement<[string, string, number], ExecutionSummary> {
  return db.prepare(
    `SELECT ${SUMMARY_COLUMNS} FROM skein_executions WHERE status = ? AND execution_id > ? ORDER BY execution_id LIMIT ?`,
  );
}

/** A page of one workflow after an id (index skein_executions_workflow). */
export function listByWorkflow(db: Db): Database.Statement<[string, string, number], ExecutionSummary> {
  return db.prepare(
    `SELECT ${SUMMARY_COLUMNS} FROM skein_executions WHERE workflow = ? AND execution_id > ? ORDER BY execution_id LIMIT ?`,
  );
}

/** A page of one workflow in one status after an id (index skein_executions_workflow_status). */
export function listByWorkflowAndStatus(
  db: Db,
): Database.Statement<[string, string, string, number], ExecutionSummary> {
  return db.prepare(
    `SELECT ${SUMMARY_COLUMNS} FROM skein_executions WHERE workflow = ? AND status = ? AND execution_id > ? ` +
      'ORDER BY execution_id LIMIT ?',
  );
}
