/**
 * Short appends of several executions as one statement (one round trip, one commit), each
 * checked as its own short statement (`short-append.ts`) would check it.
 */
import type { Query } from '../database.js';
import type { ShortAppend } from './short-append.js';

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
  UPDATE skein_executions AS h SET status = m.to_status
  FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) AS m (execution_id, status, to_status, fence)
  WHERE h.execution_id = m.execution_id AND h.status = m.status AND h.fence = m.fence
  RETURNING h.execution_id
),
written AS (
  INSERT INTO skein_events (execution_id, seq, envelope_id, type, payload, fence, recorded_at)
  SELECT e.execution_id, e.seq, e.envelope_id, e.type, e.payload, e.fence, e.recorded_at
  FROM (SELECT count(*) FROM moved) AS m0
  CROSS JOIN unnest($5::text[], $6::bigint[], $7::bigint[], $8::text[], $9::text[], $10::text[],
    $11::text[], $12::text[], $13::bigint[])
    AS e (execution_id, seq, fence, kind, status, envelope_id, type, payload, recorded_at)
  WHERE CASE e.kind
    WHEN 'step' THEN EXISTS (
      SELECT FROM skein_executions h
      WHERE h.execution_id = e.execution_id AND h.status = e.status AND h.fence = e.fence FOR SHARE
    )
    WHEN 'move' THEN e.execution_id IN (SELECT m.execution_id FROM moved m)
    ELSE true
  END
  RETURNING execution_id
),
notified AS (
  SELECT pg_notify($17, n.execution_id)
  FROM unnest($14::text[], $16::text[]) AS n (execution_id, status) WHERE n.status = 'pending'
),
started AS (
  INSERT INTO skein_executions (execution_id, workflow, status)
  SELECT n.execution_id, n.workflow, n.status
  FROM (SELECT count(*) FROM written) AS w0
  CROSS JOIN (SELECT count(*) FROM notified) AS z0
  CROSS JOIN unnest($14::text[], $15::text[], $16::text[]) AS n (execution_id, workflow, status)
)
SELECT execution_id AS "executionId" FROM written`;

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
