/**
 * The append as one statement (one round trip, one implicit transaction), in two shapes. A
 * step's append, which leaves the status as it is, inserts its events under a share lock on
 * the head row and leaves the row alone (`fastAppendQuery`); every other append locks the
 * head for update, decides, inserts and moves the status (`appendQuery`). See
 * `adr/0009-postgres-one-statement-append.md` and `adr/0018-postgres-step-append.md`.
 */
import {
  type AppendRequest,
  type ExecutionStatus,
  ExecutionStatuses,
  isTerminalStatus,
} from '@skein/workflow-runtime';
import type { Query } from './database.js';
import { messageArrays, outboxCtes } from './outbox-queries.js';

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
    TERMINAL_STATUSES,
    pendingChannel,
  ];
  if (messages.length === 0 || outboxChannel === undefined)
    return { name: 'skein_append', text: APPEND_SQL, values };
  values.push(...messageArrays(messages), outboxChannel);
  return { name: 'skein_append_outbox', text: APPEND_WITH_OUTBOX_SQL, values };
}

// The full statement with an append's outbox messages ($12–$17) and the outbox wake-up
// channel ($18): see outboxCtes. One row out still: at most one outbox_notified row.
const APPEND_WITH_OUTBOX_SQL = APPEND_SQL.replace(
  '\nnotified AS (',
  `${outboxCtes(12)}\nnotified AS (`,
).replace(
  'FROM verdict LEFT JOIN notified ON true',
  'FROM verdict LEFT JOIN notified ON true LEFT JOIN (SELECT count(*) AS n FROM outbox_notified) o ON true',
);

/** Batches up to this many events take the step append; longer ones take the full one. */
export const MAX_FAST_EVENTS = 8;

/** `count` event rows as a VALUES list (ord, envelope id, type, payload, recorded at) from `$first`. */
function valuesRows(count: number, first: number): string {
  return Array.from({ length: count }, (_, i) => {
    const p = first + i * 4;
    return i === 0
      ? `(0, $${p}::text, $${p + 1}::text, $${p + 2}::text, $${p + 3}::bigint)`
      : `(${i}, $${p}, $${p + 1}, $${p + 2}, $${p + 3})`;
  }).join(', ');
}

// The short statements serve a writer appending right after a seq it saw in the database (it
// wrote it, or read it in the execution's summary), so there can be no gap (a log never
// shrinks) and a taken seq is refused by the primary key. What remains to check is the head:
// its fence must be the writer's (older is stale, newer was never granted: L3), and its status
// the one the writer saw (non-terminal, so nothing terminal was appended: L6).
//
// A step's append keeps the status, so the head needs no write: it is read under FOR SHARE,
// which waits for an acquireFence or a status move in flight and conflicts with both. Events
// are a VALUES list, one statement text per batch length: cheaper than unnest for two events.
function stepText(count: number): string {
  return `
INSERT INTO skein_events (execution_id, seq, envelope_id, type, payload, fence, recorded_at)
SELECT $1, $2::bigint + v.o, v.i, v.t, v.p, $3::bigint, v.r
FROM (VALUES ${valuesRows(count, 5)}) AS v (o, i, t, p, r)
WHERE (SELECT fence FROM skein_executions WHERE execution_id = $1 AND status = $4 FOR SHARE) = $3::bigint`;
}

// A status move from the status the writer left ($4) to $5: the same checks, with the head
// locked by the UPDATE itself (it waits for a racing acquireFence and rechecks the newest
// row), then the events, only when the head moved.
function moveText(count: number): string {
  return `
WITH moved AS (
  UPDATE skein_executions SET status = $5
  WHERE execution_id = $1 AND status = $4 AND fence = $3::bigint
  RETURNING 1
)
INSERT INTO skein_events (execution_id, seq, envelope_id, type, payload, fence, recorded_at)
SELECT $1, $2::bigint + v.o, v.i, v.t, v.p, $3::bigint, v.r
FROM moved CROSS JOIN (VALUES ${valuesRows(count, 6)}) AS v (o, i, t, p, r)`;
}

// The start of a new execution (seq 0, the head not there yet): the events first, then the
// head, in that order like the full statement, so racing starts meet on the events' primary
// key and never deadlock. The head's INSERT has no ON CONFLICT: when the head exists (an
// acquireFence before seq 0, or a racing start), the statement fails on a unique violation and
// writes nothing, and the full statement follows, which checks the fence and says why.
// The command tag counts the head row: 1 when the events were written. An enqueue (the head
// left `pending`) also sends the execution id on the pending wake-up channel ($5), delivered
// at commit and only if the statement commits.
function startText(count: number, notify: boolean): string {
  const notified = notify ? ',\nnotified AS (\n  SELECT pg_notify($5, $1)\n)' : '';
  const after = notify ? ' CROSS JOIN (SELECT count(*) FROM notified) z' : '';
  return `
WITH written AS (
  INSERT INTO skein_events (execution_id, seq, envelope_id, type, payload, fence, recorded_at)
  SELECT $1, v.o, v.i, v.t, v.p, $4::bigint, v.r
  FROM (VALUES ${valuesRows(count, notify ? 6 : 5)}) AS v (o, i, t, p, r)
  RETURNING 1
)${notified}
INSERT INTO skein_executions (execution_id, workflow, status)
SELECT $1, $2, $3 FROM (SELECT count(*) AS n FROM written) w${after} WHERE w.n > 0`;
}

/** Statement texts by kind and batch length, built once each. */
const shortTexts = new Map<string, string>();

/** The short statement `kind` for `request`: its head parameters first, then its events'. */
function shortQuery(
  kind: 'step' | 'move' | 'start' | 'enqueue',
  textOf: (count: number) => string,
  request: AppendRequest,
  head: unknown[],
): Query {
  const name = `skein_append_${kind}_${request.events.length}`;
  let text = shortTexts.get(name);
  if (text === undefined) {
    text = textOf(request.events.length);
    shortTexts.set(name, text);
  }
  return { name, text, values: eventValues(request, head) };
}

function eventValues(request: AppendRequest, values: unknown[]): unknown[] {
  for (const event of request.events)
    values.push(event.envelopeId, event.type, event.payload, event.recordedAt);
  return values;
}

/**
 * The step append for `request` (at most {@link MAX_FAST_EVENTS} events, right after the
 * seq its writer wrote last), which writes only when the head holds `status`, the status
 * after the batch, and the writer's fence as its newest. Every event or none; none means
 * "run the full statement", which says why.
 */
export function fastAppendQuery(request: AppendRequest, status: ExecutionStatus): Query {
  return shortQuery('step', stepText, request, [
    request.executionId,
    request.expectedSeq,
    request.fence,
    status,
  ]);
}

/**
 * The status move for `request` (at most {@link MAX_FAST_EVENTS} events, right after the
 * seq its writer wrote last): writes only when the head holds `from` (the non-terminal status
 * the writer left) and the writer's fence as its newest, moving it to `to`. Every event or
 * none; none means "run the full statement".
 */
export function moveAppendQuery(request: AppendRequest, from: ExecutionStatus, to: ExecutionStatus): Query {
  const head = [request.executionId, request.expectedSeq, request.fence, from, to];
  return shortQuery('move', moveText, request, head);
}

/**
 * The start of a new execution for `request` (seq 0, at most {@link MAX_FAST_EVENTS} events),
 * leaving the head at `status`; a `pending` start (an enqueue) also notifies `pendingChannel`.
 * Writes the events and the head, or nothing when the head exists already; then the full
 * statement says why. Its row count is 1 when it wrote.
 */
export function startAppendQuery(
  request: AppendRequest,
  status: ExecutionStatus,
  pendingChannel: string,
): Query {
  const head = [request.executionId, request.workflow, status, request.fence];
  if (status !== 'pending') return shortQuery('start', (count) => startText(count, false), request, head);
  head.push(pendingChannel);
  return shortQuery('enqueue', (count) => startText(count, true), request, head);
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

/** A request for a short statement, with what that statement assumes of the head. */
export type ShortAppend =
  /** Seq 0 of a new execution, leaving the head at `status` (`pending` notifies). */
  | { kind: 'start'; request: AppendRequest; status: ExecutionStatus }
  /** Right after the last seq the writer wrote or read; the head keeps `status`. */
  | { kind: 'step'; request: AppendRequest; status: ExecutionStatus }
  /** Right after the last seq the writer wrote or read; the head moves from `from` to `status`. */
  | { kind: 'move'; request: AppendRequest; from: ExecutionStatus; status: ExecutionStatus };

/** The short statement for one request, sent alone. */
export function shortAppendQuery(item: ShortAppend, pendingChannel: string): Query {
  if (item.kind === 'step') return fastAppendQuery(item.request, item.status);
  if (item.kind === 'move') return moveAppendQuery(item.request, item.from, item.status);
  return startAppendQuery(item.request, item.status, pendingChannel);
}

/** The row count `shortAppendQuery(item)` reports when it wrote: the head row of a start, else the events. */
export function shortAppendRows(item: ShortAppend): number {
  return item.kind === 'start' ? 1 : item.request.events.length;
}

// Short appends of many executions in one statement (one round trip, one commit), each
// checked as its own statement would check it: the moves' heads first (`moved` locks each
// and moves it when it holds the writer's status and the writer's fence as its newest);
// then every event row, a step's under its head's guard read FOR SHARE, a move's only when its
// head moved, a start's unguarded; then the starts' heads, without ON CONFLICT (a head that
// exists fails the whole statement on a unique violation, and every request runs alone), and
// for each start left `pending` (an enqueue) a notification on the pending wake-up channel.
// Events before the starts' heads, as in the start statement, so racing starts meet on the
// events' primary key first. The cross joins on count(*) make each step run to completion
// before the next one begins. Once this statement holds a head's lock the head cannot change,
// so the rows of one request pass or fail together; RETURNING says which executions were
// written (each at most once in a batch).
const BATCH_APPEND_SQL = `
WITH moved AS (
  UPDATE skein_executions AS h SET status = m.t
  FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) AS m (x, s, t, f)
  WHERE h.execution_id = m.x AND h.status = m.s AND h.fence = m.f
  RETURNING h.execution_id AS x
),
written AS (
  INSERT INTO skein_events (execution_id, seq, envelope_id, type, payload, fence, recorded_at)
  SELECT e.x, e.s, e.i, e.t, e.p, e.f, e.r
  FROM (SELECT count(*) FROM moved) AS m0
  CROSS JOIN unnest($5::text[], $6::bigint[], $7::bigint[], $8::text[], $9::text[], $10::text[],
    $11::text[], $12::text[], $13::bigint[]) AS e (x, s, f, k, st, i, t, p, r)
  WHERE CASE e.k
    WHEN 'step' THEN EXISTS (
      SELECT FROM skein_executions h WHERE h.execution_id = e.x AND h.status = e.st AND h.fence = e.f FOR SHARE
    )
    WHEN 'move' THEN e.x IN (SELECT x FROM moved)
    ELSE true
  END
  RETURNING execution_id AS x
),
notified AS (
  SELECT pg_notify($17, n.x) FROM unnest($14::text[], $16::text[]) AS n (x, s) WHERE n.s = 'pending'
),
started AS (
  INSERT INTO skein_executions (execution_id, workflow, status)
  SELECT n.x, n.w, n.s
  FROM (SELECT count(*) FROM written) AS w0
  CROSS JOIN (SELECT count(*) FROM notified) AS z0
  CROSS JOIN unnest($14::text[], $15::text[], $16::text[]) AS n (x, w, s)
)
SELECT x AS "executionId" FROM written`;

/**
 * The short appends of several executions (one request each) as one statement. Sorted by
 * execution id, so that two such statements take their locks in the same order.
 */
export function batchAppendQuery(batch: readonly ShortAppend[], pendingChannel: string): Query {
  const moves: unknown[][] = [[], [], [], []];
  const events: unknown[][] = [[], [], [], [], [], [], [], [], []];
  const starts: unknown[][] = [[], [], []];
  const sorted = [...batch].sort((a, b) => compare(a.request.executionId, b.request.executionId));
  for (const item of sorted) {
    const { request } = item;
    if (item.kind === 'move') push(moves, [request.executionId, item.from, item.status, request.fence]);
    if (item.kind === 'start') push(starts, [request.executionId, request.workflow, item.status]);
    const guard = item.kind === 'step' ? item.status : null;
    request.events.forEach((event, k) => {
      push(events, [
        request.executionId,
        request.expectedSeq + k,
        request.fence,
        item.kind,
        guard,
        event.envelopeId,
        event.type,
        event.payload,
        event.recordedAt,
      ]);
    });
  }
  return {
    name: 'skein_append_batch',
    text: BATCH_APPEND_SQL,
    values: [...moves, ...events, ...starts, pendingChannel],
  };
}

function push(columns: unknown[][], row: readonly unknown[]): void {
  row.forEach((value, c) => {
    columns[c]!.push(value);
  });
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
