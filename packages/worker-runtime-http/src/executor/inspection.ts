/**
 * The executor's side of `inspectRetainedRun` (E5): admitted only for the current session the
 * request names; FOUND shows the newest row of the execution when it is not the current
 * session's (identity, binding, transaction id, start marker, due time; never the workflow or
 * its input), FILTERED when it is, ABSENT when there is none. Every failure is an ERROR answer,
 * never ABSENT. It only reads.
 */
import { wireExecutionId } from '../execution-id.js';
import {
  type InspectionAnswer,
  type InspectRequest,
  MAX_SESSION_FIELD,
  MAX_TRANSACTION_ID_BYTES,
} from './executor-wire.js';
import { type Binding, boundTo, type RetainedRow, type RetainedStore } from './retained-store.js';

/** The answer to `request`, read from `store` by the session holding `current`. */
export function inspectRow(
  store: RetainedStore | null,
  current: Binding | null,
  request: InspectRequest,
): InspectionAnswer {
  if (store === null || !store.open || current === null) {
    return { status: 'ERROR', reason: 'shutdown', detail: 'the executor is stopping' };
  }
  if (
    request.session.incarnation !== current.incarnation ||
    request.session.sessionId !== current.sessionId
  ) {
    return {
      status: 'ERROR',
      reason: 'not-current-session',
      detail: 'the request names a session that is not current',
    };
  }
  const id = wireExecutionId.safeParse(request.executionId);
  if (!id.success) {
    return {
      status: 'ERROR',
      reason: 'malformed-id',
      detail: id.error.issues[0]?.message ?? 'malformed execution id',
    };
  }
  let rows: RetainedRow[];
  try {
    rows = store.rowsOf(id.data);
  } catch (error) {
    return {
      status: 'ERROR',
      reason: 'read-failed',
      detail: error instanceof Error ? error.message : String(error),
    };
  }
  const [newest] = rows;
  if (newest === undefined) return { status: 'ABSENT' };
  if (boundTo(newest, current)) return { status: 'FILTERED' };
  const oversized = oversizedField(newest);
  if (oversized !== null) return { status: 'ERROR', reason: 'oversized-field', detail: oversized };
  return {
    status: 'FOUND',
    run: {
      executionId: newest.executionId,
      fence: newest.fence,
      binding: newest.binding,
      transactionId: newest.transactionId,
      started: newest.startedAt !== null,
      startMarker: newest.startedAt,
      dueAt: newest.dueAt,
    },
  };
}

/** The stored field over its bound, named, or null. */
function oversizedField(row: RetainedRow): string | null {
  const bytes = Buffer.byteLength(row.transactionId, 'utf8');
  if (bytes > MAX_TRANSACTION_ID_BYTES) {
    return `transaction_id is ${bytes} bytes, over ${MAX_TRANSACTION_ID_BYTES}`;
  }
  for (const [field, value] of [
    ['hub_incarnation', row.binding?.incarnation],
    ['session_id', row.binding?.sessionId],
  ] as const) {
    if (value !== undefined && value.length > MAX_SESSION_FIELD)
      return `${field} is ${value.length} characters, over ${MAX_SESSION_FIELD}`;
  }
  return null;
}
