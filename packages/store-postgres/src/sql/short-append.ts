/**
 * The short statements: an append right after the seq its writer wrote or read (a step's
 * events under a share lock on the head; a status move; the start of a new execution), one
 * statement text per kind and batch length. Each writes every event or none; none means "run
 * the full statement" (`full-append.ts`), which says why. See
 * `adr/0018-postgres-step-append.md`.
 */
import type { ExecutionStatus } from '@skein/workflow-runtime';
import type { AppendRequest } from '@skein/workflow-runtime/spi';
import type { Query } from '../database.js';

/** Batches up to this many events take a short statement; longer ones take the full one. */
export const MAX_SHORT_EVENTS = 8;

/** `count` event rows as a VALUES list (ord, envelope_id, type, payload, recorded_at) from `$first`. */
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
SELECT $1, $2::bigint + v.ord, v.envelope_id, v.type, v.payload, $3::bigint, v.recorded_at
FROM (VALUES ${valuesRows(count, 5)}) AS v (ord, envelope_id, type, payload, recorded_at)
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
SELECT $1, $2::bigint + v.ord, v.envelope_id, v.type, v.payload, $3::bigint, v.recorded_at
FROM moved CROSS JOIN (VALUES ${valuesRows(count, 6)}) AS v (ord, envelope_id, type, payload, recorded_at)`;
}

// The start of a new execution (seq 0, the head not there yet): the events first, then the
// head, in that order like the full statement, so racing starts meet on the events' primary
// key and never deadlock. The head's INSERT has no ON CONFLICT: when the head exists (an
// acquireFence before seq 0, or a racing start), the statement fails on a unique violation and
// writes nothing, and the full statement follows, which checks the fence and says why.
// The command tag counts the head row: 1 when the events were written. An enqueue (the head
// left `pending`) also sends the execution id on the pending wake-up channel ($5), delivered
// at commit and only if the statement commits.
function startText(count: number, { notify }: { notify: boolean }): string {
  const notified = notify ? ',\nnotified AS (\n  SELECT pg_notify($5, $1)\n)' : '';
  const after = notify ? ' CROSS JOIN (SELECT count(*) FROM notified) z' : '';
  return `
WITH written AS (
  INSERT INTO skein_events (execution_id, seq, envelope_id, type, payload, fence, recorded_at)
  SELECT $1, v.ord, v.envelope_id, v.type, v.payload, $4::bigint, v.recorded_at
  FROM (VALUES ${valuesRows(count, notify ? 6 : 5)}) AS v (ord, envelope_id, type, payload, recorded_at)
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
 * The step append for `request` (at most {@link MAX_SHORT_EVENTS} events, right after the
 * seq its writer wrote last), which writes only when the head holds `status`, the status
 * after the batch, and the writer's fence as its newest. Every event or none; none means
 * "run the full statement", which says why.
 */
export function stepAppendQuery(request: AppendRequest, status: ExecutionStatus): Query {
  return shortQuery('step', stepText, request, [
    request.executionId,
    request.expectedSeq,
    request.fence,
    status,
  ]);
}

/**
 * The status move for `request` (at most {@link MAX_SHORT_EVENTS} events, right after the
 * seq its writer wrote last): writes only when the head holds `from` (the non-terminal status
 * the writer left) and the writer's fence as its newest, moving it to `to`. Every event or
 * none; none means "run the full statement".
 */
export function moveAppendQuery(request: AppendRequest, from: ExecutionStatus, to: ExecutionStatus): Query {
  const head = [request.executionId, request.expectedSeq, request.fence, from, to];
  return shortQuery('move', moveText, request, head);
}

/**
 * The start of a new execution for `request` (seq 0, at most {@link MAX_SHORT_EVENTS} events),
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
  if (status !== 'pending')
    return shortQuery('start', (count) => startText(count, { notify: false }), request, head);
  head.push(pendingChannel);
  return shortQuery('enqueue', (count) => startText(count, { notify: true }), request, head);
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
  if (item.kind === 'step') return stepAppendQuery(item.request, item.status);
  if (item.kind === 'move') return moveAppendQuery(item.request, item.from, item.status);
  return startAppendQuery(item.request, item.status, pendingChannel);
}

/** The row count `shortAppendQuery(item)` reports when it wrote: the head row of a start, else the events. */
export function shortAppendRows(item: ShortAppend): number {
  return item.kind === 'start' ? 1 : item.request.events.length;
}
