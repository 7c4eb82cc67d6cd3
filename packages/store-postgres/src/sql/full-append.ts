/**
 * The full append: one statement (one round trip, one implicit transaction) that locks the
 * head for update, decides, inserts the events and moves the status, for every append the
 * short statements (`short-append.ts`) do not take. See
 * `adr/0009-postgres-one-statement-append.md`.
 */
import { type ExecutionStatus, ExecutionStatuses, isTerminalStatus } from '@skein/workflow-runtime';
import { type AppendRequest, reopensTerminal } from '@skein/workflow-runtime/spi';
import type { Query } from '../database.js';
import { messageArrays, outboxCtes } from '../outbox-queries.js';

/** What the full append statement returns: the head it locked and, unless it wrote, why not. */
export interface AppendRow {
  /** Null when the events were written; otherwise which check refused (for diagnostics). */
  refusal: 'exists' | 'stale' | 'ungranted' | 'terminated' | 'duplicate' | 'gap' | null;
  headFence: number;
  headSeq: number;
  headStatus: ExecutionStatus | null;
  headWorkflow: string | null;
}

const TERMINAL_STATUSES = ExecutionStatuses.filter(isTerminalStatus);

/** The statuses that refuse `request`: all terminal ones, but those its first event reopens (adr/0067). */
function terminalFor(request: AppendRequest): readonly ExecutionStatus[] {
  const first = request.events[0]?.type;
  if (first !== 'EXECUTION_REDRIVEN') return TERMINAL_STATUSES;
  return TERMINAL_STATUSES.filter((status) => !reopensTerminal(status, first));
}

// The checks follow `checkAppend`'s order: seq 0 taken, fence (stale, never granted), terminal,
// duplicate, gap.
// `head` locks the newest version of the head row (READ COMMITTED rechecks a row that changed
// since the snapshot); `last` is the newest seq in the statement's snapshot. An append that
// raced another append of the same execution past `last` meets it on the events' primary key.
// `written` feeds `created` and `moved`, so every statement inserts events before touching
// the head: two racing starts of one new execution meet on the events' primary key and never
// deadlock. When the head row was not visible at the start of the statement, `created`
// inserts it without ON CONFLICT: if another session created it meanwhile (an acquireFence
// before seq 0), the statement fails on skein_executions_pkey, writes nothing, and the caller
// runs it again, now against that row and its fence. `moved` writes the head only when the
// status or the workflow changes. `notified` sends the execution id on the pending wake-up
// channel ($11) for an enqueue (seq 0 leaving the head 'pending'), delivered at commit and
// only if the statement commits; the final SELECT joins it because PostgreSQL never runs a
// SELECT CTE that nothing references (one verdict row and at most one notified row: still
// exactly one row out).
const APPEND_SQL = `
WITH head AS MATERIALIZED (
  SELECT fence, status, workflow FROM skein_executions WHERE execution_id = $1 FOR UPDATE
),
last AS MATERIALIZED (
  SELECT max(seq) AS seq FROM skein_events WHERE execution_id = $1
),
verdict AS MATERIALIZED (
  SELECT
    CASE
      WHEN $3::bigint = 0 AND l.seq IS NOT NULL THEN 'exists'
      WHEN $4::bigint < coalesce(h.fence, 0) THEN 'stale'
      WHEN $4::bigint > coalesce(h.fence, 0) THEN 'ungranted'
      WHEN h.status = ANY ($10::text[]) THEN 'terminated'
      WHEN $3::bigint <= coalesce(l.seq, -1) THEN 'duplicate'
      WHEN $3::bigint > coalesce(l.seq, -1) + 1 THEN 'gap'
    END AS refusal,
    h.fence IS NOT NULL AS found,
    coalesce(h.fence, 0) AS fence, coalesce(l.seq, -1) AS last_seq, h.status, h.workflow
  FROM last l LEFT JOIN head h ON true
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
  INSERT INTO skein_executions (execution_id, workflow, status)
  SELECT $1, $2, $9
  FROM verdict v CROSS JOIN (SELECT count(*) AS n FROM written) w
  WHERE v.refusal IS NULL AND NOT v.found AND w.n > 0
),
moved AS (
  UPDATE skein_executions AS x
  SET workflow = coalesce(x.workflow, $2), status = coalesce($9, x.status)
  FROM verdict v CROSS JOIN (SELECT count(*) AS n FROM written) w
  WHERE x.execution_id = $1 AND v.refusal IS NULL AND v.found AND w.n > 0
    AND (x.workflow IS NULL OR x.status IS DISTINCT FROM coalesce($9, x.status))
),
notified AS (
  SELECT pg_notify($11, $1) FROM verdict v WHERE v.refusal IS NULL AND $3::bigint = 0 AND $9 = 'pending'
)
SELECT refusal, fence AS "headFence", last_seq AS "headSeq", status AS "headStatus", workflow AS "headWorkflow"
FROM verdict LEFT JOIN notified ON true`;

/**
 * The full append statement for `request`. `status` is the status after the batch, or null
 * when the batch leaves the head's status as it is (only `CANCEL_REQUESTED` events).
 * `pendingChannel` is the database-wide pending wake-up channel, notified (payload: the
 * execution id) when the statement writes seq 0 and leaves the execution `pending`.
 */
export function appendQuery(
  request: AppendRequest,
  status: ExecutionStatus | null,
  pendingChannel: string,
  outboxChannel?: string,
): Query {
  const { events } = request;
  const messages = request.outbox ?? [];
  const values: unknown[] = [
    request.executionId,
    request.workflow,
    request.expectedSeq,
    request.fence,
    events.map((event) => event.envelopeId),
    events.map((event) => event.type),
    events.map((event) => event.payload),
    events.map((event) => event.recordedAt),
    status,
    terminalFor(request),
    pendingChannel,
  ];
  if (messages.length === 0 || outboxChannel === undefined)
    return { name: 'skein_append', text: APPEND_SQL, values };
  values.push(...messageArrays(messages), outboxChannel);
  return { name: 'skein_append_outbox', text: APPEND_WITH_OUTBOX_SQL, values };
}

// The full statement with an append's outbox messages ($12–$18) and the outbox wake-up
// channel ($19): see outboxCtes. One row out still: at most one outbox_notified row.
const APPEND_WITH_OUTBOX_SQL = APPEND_SQL.replace(
  '\nnotified AS (',
  `${outboxCtes(12)}\nnotified AS (`,
).replace(
  'FROM verdict LEFT JOIN notified ON true',
  'FROM verdict LEFT JOIN notified ON true LEFT JOIN (SELECT count(*) AS n FROM outbox_notified) o ON true',
);
