/** The event store's queries besides the append, one per function. */
import type { ExecutionStatus } from '@skein/workflow-runtime';
import type { Query } from './database.js';

const EVENT_COLUMNS =
  'execution_id AS "executionId", seq, envelope_id AS "envelopeId", type, payload, fence, recorded_at AS "recordedAt"';
// A summary is the head row and the newest event, found by one backward seek of the events'
// primary key. The inner join leaves out heads that acquireFence made before seq 0 existed.
const SUMMARY_FROM =
  'SELECT x.execution_id AS "executionId", x.workflow, x.status, l.seq AS sequence, ' +
  'l.recorded_at AS "updatedAt" FROM skein_executions x CROSS JOIN LATERAL (SELECT seq, recorded_at ' +
  'FROM skein_events e WHERE e.execution_id = x.execution_id ORDER BY seq DESC LIMIT 1) l';

/** Take the next fence in one statement; works before seq 0 exists. */
export function nextFence(executionId: string): Query {
  return {
    name: 'skein_next_fence',
    text:
      'INSERT INTO skein_executions AS x (execution_id, fence) VALUES ($1, 1) ' +
      'ON CONFLICT (execution_id) DO UPDATE SET fence = x.fence + 1 RETURNING fence',
    values: [executionId],
  };
}

/**
 * A new fence for each of `executionIds` (sorted, distinct) still pending, locked in id order,
 * and the log of each, one row per event with the new fence beside it.
 */
export function takeOverPending(executionIds: readonly string[]): Query {
  const columns = EVENT_COLUMNS.split(', ')
    .map((column) => `e.${column}`)
    .join(', ');
  return {
    name: 'skein_take_over_pending',
    text:
      'WITH s AS (SELECT execution_id FROM skein_executions WHERE execution_id = ANY($1::text[]) ' +
      "AND status = 'pending' ORDER BY execution_id FOR UPDATE), " +
      't AS (UPDATE skein_executions x SET fence = x.fence + 1 FROM s ' +
      "WHERE x.execution_id = s.execution_id AND x.status = 'pending' RETURNING x.execution_id, x.fence) " +
      `SELECT t.fence AS "takenFence", ${columns} FROM t JOIN skein_events e ON e.execution_id = t.execution_id ` +
      'ORDER BY e.execution_id, e.seq',
    values: [executionIds],
  };
}

/** The newest fence of one execution. */
export function selectFence(executionId: string): Query {
  return {
    name: 'skein_select_fence',
    text: 'SELECT fence FROM skein_executions WHERE execution_id = $1',
    values: [executionId],
  };
}

/** Events of one execution from a seq, at most `limit` (null: no limit). */
export function selectEvents(executionId: string, fromSeq: number, limit: number | null): Query {
  return {
    name: 'skein_select_events',
    text: `SELECT ${EVENT_COLUMNS} FROM skein_events WHERE execution_id = $1 AND seq >= $2 ORDER BY seq LIMIT $3`,
    values: [executionId, fromSeq, limit],
  };
}

/** The index row of one execution once seq 0 exists. */
export function selectExecution(executionId: string): Query {
  return {
    name: 'skein_select_execution',
    text: `${SUMMARY_FROM} WHERE x.execution_id = $1 AND x.status IS NOT NULL`,
    values: [executionId],
  };
}

/** A page of every started execution after an id. */
export function listAll(after: string, limit: number): Query {
  return {
    name: 'skein_list_all',
    text:
      `${SUMMARY_FROM} WHERE x.execution_id > $1 AND x.status IS NOT NULL ` +
      'ORDER BY x.execution_id LIMIT $2',
    values: [after, limit],
  };
}

/** A page of executions in any of some statuses after an id (index skein_executions_status). */
export function listByStatus(statuses: readonly ExecutionStatus[], after: string, limit: number): Query {
  return {
    name: 'skein_list_by_status',
    text:
      `${SUMMARY_FROM} WHERE x.status = ANY ($1::text[]) AND x.execution_id > $2 ` +
      'ORDER BY x.execution_id LIMIT $3',
    values: [[...statuses], after, limit],
  };
}

/** A page of one workflow after an id (index skein_executions_workflow). */
export function listByWorkflow(workflow: string, after: string, limit: number): Query {
  return {
    name: 'skein_list_by_workflow',
    text: `${SUMMARY_FROM} WHERE x.workflow = $1 AND x.execution_id > $2 ORDER BY x.execution_id LIMIT $3`,
    values: [workflow, after, limit],
  };
}

/** A page of one workflow in any of some statuses after an id (index skein_executions_workflow_status). */
export function listByWorkflowAndStatus(
  workflow: string,
  statuses: readonly ExecutionStatus[],
  after: string,
  limit: number,
): Query {
  return {
    name: 'skein_list_by_workflow_and_status',
    text:
      `${SUMMARY_FROM} WHERE x.workflow = $1 AND x.status = ANY ($2::text[]) ` +
      'AND x.execution_id > $3 ORDER BY x.execution_id LIMIT $4',
    values: [workflow, [...statuses], after, limit],
  };
}
