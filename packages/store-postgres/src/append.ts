/**
 * One append on PostgreSQL: shape checks in JS (nothing is sent for a malformed request), then
 * the one-statement append, then the refusal mapped to exactly the error `checkAppend` raises.
 */
import {
  DuplicateEnvelopeIdError,
  DuplicateSequenceError,
  ExecutionAlreadyExistsError,
  type ExecutionStatus,
  InvalidAppendError,
  StorageWriteError,
} from '@skein/workflow-runtime';
import {
  type AppendRequest,
  type AppendResult,
  checkAppend,
  type ExecutionHead,
  statusAfter,
} from '@skein/workflow-runtime/spi';
import type { Database, Query } from './database.js';
import {
  isUniqueViolation,
  NulInTextError,
  StoreClosedError,
  UnexpectedAppendResultError,
} from './errors.js';
import { hasNul } from './nul-text.js';
import { takenMessageIdsQuery } from './outbox-queries.js';
import { refuseNulIn, WAKEUP_OUTBOX } from './postgres-outbox-store.js';
import type { ShortAppends } from './short-appends.js';
import { takenEnvelopeIdsQuery, workflowQuery } from './sql/append-reads.js';
import { type AppendRow, appendQuery } from './sql/full-append.js';
import { MAX_SHORT_EVENTS } from './sql/short-append.js';
import { channelName, WAKEUP_PENDING } from './wakeups.js';

/** Runs of the full statement when the head keeps changing under it (once is the rare case). */
const MAX_ATTEMPTS = 3;

/**
 * Append `request` in one round trip; rejects with the same errors as `checkAppend`.
 * `hint` is what this process's last append or summary read of the execution left (last seq
 * and status). A short statement runs first when one fits (see `shortAppend`): the start of a
 * new execution, or, when the request continues right after the hint, the step append or the
 * status move. Each writes nothing when the head is not as it assumes or holds another fence,
 * and the full statement follows, which writes or says why not. The full
 * statement also runs again when an `acquireFence` created the head row while a start was
 * running, or when a refusal came from a snapshot that a racing append has since moved past.
 */
export async function appendEvents(
  db: Database,
  shortAppends: ShortAppends,
  request: AppendRequest,
  maxPayloadBytes: number,
  hint?: AppendResult,
): Promise<AppendResult> {
  checkShape(request, maxPayloadBytes);
  const status = statusAfterBatch(request);
  const lastSeq = request.expectedSeq + request.events.length - 1;
  // Messages ride only the full statement, which writes them with the events (O1).
  const withOutbox = (request.outbox?.length ?? 0) > 0;
  const short = status === null || withOutbox ? undefined : shortAppend(shortAppends, request, status, hint);
  if (short !== undefined) {
    let written: boolean;
    try {
      written = await short;
    } catch (error) {
      throw await refusalOf(db, request, error);
    }
    if (written) return { lastSeq, status: status! };
  }
  for (let attempt = 1; ; attempt += 1) {
    let row: AppendRow;
    try {
      const outboxChannel = withOutbox ? channelName(db.schema, WAKEUP_OUTBOX) : undefined;
      const query = appendQuery(request, status, channelName(db.schema, WAKEUP_PENDING), outboxChannel);
      row = await runStatement(db, query, request.executionId);
    } catch (error) {
      throw await refusalOf(db, request, error);
    }
    if (row.refusal === null) return { lastSeq, status: status ?? row.headStatus! };
    checkAppend(headOf(row), request, maxPayloadBytes);
    // Accepted now: the refusal came from a snapshot taken before a racing append committed.
    if (attempt >= MAX_ATTEMPTS) {
      throw new UnexpectedAppendResultError(
        request.executionId,
        `the database refused (${row.refusal}) an append that checkAppend accepts`,
      );
    }
  }
}

/**
 * The short statement for `request`, if one fits: the start of a new execution (an enqueue's
 * notifies the other nodes), or, right after the seq this process wrote or read last, the step
 * append (status kept) or the status move; grouped with other executions' short appends under
 * load. Resolves false when it wrote nothing (the head was not as assumed, or a unique
 * violation).
 */
function shortAppend(
  shortAppends: ShortAppends,
  request: AppendRequest,
  status: ExecutionStatus,
  hint: AppendResult | undefined,
): Promise<boolean> | undefined {
  if (request.expectedSeq === 0) {
    // The start statement assumes no head row, i.e. fence 0: under another fence the head
    // exists (acquireFence made it) or the fence was never granted; the full statement decides.
    if (request.events.length > MAX_SHORT_EVENTS || request.fence !== 0) return undefined;
    return shortAppends.submit({ kind: 'start', request, status });
  }
  if (hint === undefined || !continuesAfter(request, hint)) return undefined;
  if (status === hint.status) return shortAppends.submit({ kind: 'step', request, status });
  return shortAppends.submit({ kind: 'move', request, from: hint.status, status });
}

/**
 * Whether `request` fits the short statements: it starts right after the seq this process
 * wrote or read last (so there is no gap: a log never shrinks), with not too many events.
 */
function continuesAfter(request: AppendRequest, hint: AppendResult): boolean {
  return request.expectedSeq === hint.lastSeq + 1 && request.events.length <= MAX_SHORT_EVENTS;
}

/** Run the full append statement; again when the head row appeared under it (see sql/full-append.ts). */
async function runStatement(db: Database, query: Query, executionId: string): Promise<AppendRow> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      const row = (await db.query<AppendRow>('append', query)).rows[0];
      if (row === undefined) throw new UnexpectedAppendResultError(executionId, 'append returned no row');
      return row;
    } catch (error) {
      if (constraintOf(error) !== 'skein_executions_pkey' || attempt >= MAX_ATTEMPTS) throw error;
    }
  }
}

/**
 * The checks that need no head: `checkAppend` against a head that every well-formed request
 * fits (empty log up to `expectedSeq - 1`, the writer's fence), then U+0000, which `text`
 * cannot hold.
 */
function checkShape(request: AppendRequest, maxPayloadBytes: number): void {
  const fits: ExecutionHead = {
    fence: request.fence,
    lastSeq: request.expectedSeq - 1,
    status: undefined,
    workflow: undefined,
  };
  checkAppend(fits, request, maxPayloadBytes);
  const { executionId } = request;
  if (hasNul(executionId)) throw new NulInTextError(executionId, 'the execution id');
  if (hasNul(String(request.workflow))) throw new NulInTextError(executionId, 'the workflow name');
  for (let i = 0; i < request.events.length; i++) {
    const event = request.events[i]!;
    const seq = request.expectedSeq + i;
    if (hasNul(event.payload)) throw new NulInTextError(executionId, `the payload at seq ${seq}`);
    if (hasNul(event.envelopeId)) throw new NulInTextError(executionId, `the envelope id at seq ${seq}`);
  }
  if (request.outbox !== undefined) refuseNulIn(request.outbox, 'append', executionId);
}

/**
 * The head status after the batch, or null when it depends on the head. `statusAfter` keeps
 * the current status only for events that do not change it (`CANCEL_REQUESTED`), so folding
 * from two different statuses gives the same answer exactly when the head does not matter.
 */
function statusAfterBatch(request: AppendRequest): ExecutionStatus | null {
  let fromRunning: ExecutionStatus = 'running';
  let fromSuspended: ExecutionStatus = 'suspended';
  for (const event of request.events) {
    fromRunning = statusAfter(fromRunning, event.type);
    fromSuspended = statusAfter(fromSuspended, event.type);
  }
  return fromRunning === fromSuspended ? fromRunning : null;
}

function headOf(row: AppendRow): ExecutionHead {
  return {
    fence: row.headFence,
    lastSeq: row.headSeq,
    status: row.headStatus ?? undefined,
    workflow: row.headWorkflow ?? undefined,
  };
}

/** Map a failed append statement to its refusal; anything else becomes `StorageWriteError`. */
async function refusalOf(db: Database, request: AppendRequest, error: unknown): Promise<Error> {
  if (error instanceof StoreClosedError) return error;
  const { executionId } = request;
  if (!isUniqueViolation(error)) return new StorageWriteError(executionId, { cause: error });
  try {
    if (error.constraint === 'skein_outbox_events_pkey') {
      const taken = (await db.query<{ id: string }>('append', takenMessageIdsQuery(request))).rows;
      const ids = taken.map((row) => `"${row.id}"`).join(', ');
      return new InvalidAppendError(executionId, `outbox message id ${ids} is taken`);
    }
    if (error.constraint === 'skein_events_envelope_id_key') {
      return new DuplicateEnvelopeIdError(executionId, await reusedEnvelopeId(db, request), { cause: error });
    }
    if (error.constraint === 'skein_events_pkey' && request.expectedSeq === 0) {
      // Two starts of a new execution raced; the head row did not exist when this one began.
      const rows = (await db.query<{ workflow: string | null }>('append', workflowQuery(executionId))).rows;
      return new ExecutionAlreadyExistsError(executionId, rows[0]?.workflow ?? undefined, { cause: error });
    }
    if (error.constraint === 'skein_events_pkey') {
      return new DuplicateSequenceError(executionId, request.expectedSeq, { cause: error });
    }
  } catch (readError) {
    return new StorageWriteError(executionId, { cause: new AggregateError([error, readError]) });
  }
  return new StorageWriteError(executionId, { cause: error });
}

/** The first envelope id of the request that repeats within it or is already in the log. */
async function reusedEnvelopeId(db: Database, request: AppendRequest): Promise<string> {
  const ids = request.events.map((event) => event.envelopeId);
  const repeated = ids.find((id, i) => ids.indexOf(id) !== i);
  if (repeated !== undefined) return repeated;
  const taken = new Set(
    (await db.query<{ envelopeId: string }>('append', takenEnvelopeIdsQuery(ids))).rows.map(
      (row) => row.envelopeId,
    ),
  );
  const found = ids.find((id) => taken.has(id));
  if (found === undefined) {
    throw new UnexpectedAppendResultError(request.executionId, 'envelope id conflict, but no id is taken');
  }
  return found;
}

/** The unique constraint `error` violated, if it is a unique violation. */
function constraintOf(error: unknown): string | undefined {
  return isUniqueViolation(error) ? error.constraint : undefined;
}
