/**
 * The append as one statement (one round trip, one implicit transaction): lock and read the
 * head row, decide, insert every event through `unnest`, move the head, and return the head
 * as it was with the verdict. See `adr/0009-postgres-one-statement-append.md`.
 */
import {
  type AppendRequest,
  type ExecutionStatus,
  ExecutionStatuses,
  isTerminalStatus,
} from '@skein/workflow-runtime';
import type { Query } from './database.js';

/** What the append statement returns: the head it locked, and the result when it wrote. */
export interface AppendRow {
  /** Null when the events were written; otherwise which check refused (for diagnostics). */
  refusal: 'exists' | 'stale' | 'terminated' | 'duplicate' | 'gap' | null;
  headFence: number;
  headSeq: number;
  headStatus: ExecutionStatus | null;
  headWorkflow: string | null;
  lastSeq: number | null;
  status: ExecutionStatus | null;
}

const TERMINAL_STATUSES = ExecutionStatuses.filter(isTerminalStatus);

// The checks follow `checkAppend`'s order: seq 0 taken, fence, terminal, duplicate, gap.
// `head` locks the newest version of the head row (READ COMMITTED rechecks a row that changed
// since the snapshot). `written` feeds `created` and `moved`, so every statement inserts events
// before touching the head: two racing starts of one new execution meet on the events' primary
// key and never deadlock. When the head row was not visible at the start of the statement,
// `created` inserts it without ON CONFLICT: if another session created it meanwhile (an
// acquireFence before seq 0), the statement fails on skein_executions_pkey, writes nothing, and
// the caller runs it again, now against that row and its fence.
const APPEND_SQL = `
WITH head AS MATERIALIZED (
  SELECT fence, last_seq, status, workflow FROM skein_executions WHERE execution_id = $1 FOR UPDATE
),
verdict AS MATERIALIZED (
  SELECT
    CASE
      WHEN $3::bigint = 0 AND coalesce(h.last_seq, -1) >= 0 THEN 'exists'
      WHEN $4::bigint < coalesce(h.fence, 0) THEN 'stale'
      WHEN h.status = ANY ($11::text[]) THEN 'terminated'
      WHEN $3::bigint <= coalesce(h.last_seq, -1) THEN 'duplicate'
      WHEN $3::bigint > coalesce(h.last_seq, -1) + 1 THEN 'gap'
    END AS refusal,
    h.fence IS NOT NULL AS found,
    coalesce(h.fence, 0) AS fence, coalesce(h.last_seq, -1) AS last_seq, h.status, h.workflow
  FROM (VALUES (1)) AS one LEFT JOIN head h ON true
),
written AS (
  INSERT INTO skein_events (execution_id, seq, envelope_id, type, payload, fence, recorded_at)
  SELECT $1, $3::bigint + e.ord - 1, e.envelope_id, e.type, e.payload, $4, e.recorded_at
  FROM verdict v
  CROSS JOIN unnest($5::text[], $6::text[], $7::text[], $8::bigint[])
    WITH ORDINALITY AS e (envelope_id, type, payload, recorded_at, ord)
  WHERE v.refusal IS NULL
  RETURNING seq
),
created AS (
  INSERT INTO skein_executions (execution_id, workflow, status, last_seq, updated_at)
  SELECT $1, $2, $9, w.last_seq, $10
  FROM verdict v CROSS JOIN (SELECT max(seq) AS last_seq FROM written) w
  WHERE v.refusal IS NULL AND NOT v.found
  RETURNING last_seq, status
),
moved AS (
  UPDATE skein_executions AS x
  SET workflow = coalesce(x.workflow, $2), status = coalesce($9, v.status), last_seq = w.last_seq, updated_at = $10
  FROM verdict v CROSS JOIN (SELECT max(seq) AS last_seq FROM written) w
  WHERE x.execution_id = $1 AND v.refusal IS NULL AND v.found
  RETURNING x.last_seq, x.status
)
SELECT v.refusal, v.fence AS "headFence", v.last_seq AS "headSeq", v.status AS "headStatus",
  v.workflow AS "headWorkflow", coalesce(c.last_seq, m.last_seq) AS "lastSeq", coalesce(c.status, m.status) AS status
FROM verdict v LEFT JOIN created c ON true LEFT JOIN moved m ON true`;

/**
 * The append statement for `request`. `status` is the status after the batch, or null when
 * the batch leaves the head's status as it is (only `CANCEL_REQUESTED` events).
 */
export function appendQuery(request: AppendRequest, status: ExecutionStatus | null): Query {
  const { events } = request;
  return {
    name: 'skein_append',
    text: APPEND_SQL,
    values: [
      request.executionId,
      request.workflow,
      request.expectedSeq,
      request.fence,
      events.map((event) => event.envelopeId),
      events.map((event) => event.type),
      events.map((event) => event.payload),
      events.map((event) => event.recordedAt),
      status,
      events[events.length - 1]!.recordedAt,
      TERMINAL_STATUSES,
    ],
  };
}

/** The workflow of an execution's seq 0, read after a racing start lost on the primary key. */
export function workflowQuery(executionId: string): Query {
  return {
    name: 'skein_select_workflow',
    text: 'SELECT workflow FROM skein_executions WHERE execution_id = $1',
    values: [executionId],
  };
}

/** Which of `envelopeIds` are in the log, read after a unique violation on envelope_id. */
export function takenEnvelopeIdsQuery(envelopeIds: readonly string[]): Query {
  return {
    name: 'skein_select_taken_envelope_ids',
    text: 'SELECT envelope_id AS "envelopeId" FROM skein_events WHERE envelope_id = ANY ($1::text[])',
    values: [[...envelopeIds]],
  };
}
