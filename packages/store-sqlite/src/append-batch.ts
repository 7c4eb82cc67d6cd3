/**
 * The group-commit flush (L4): one BEGIN IMMEDIATE … COMMIT for the whole batch, each request
 * checked with `checkAppend` against the head row and written inside its own SAVEPOINT, so a
 * refused request rolls back alone and every caller gets its own outcome.
 */
import {
  type AppendRequest,
  type AppendResult,
  checkAppend,
  DuplicateEnvelopeIdError,
  DuplicateSequenceError,
  type ExecutionHead,
  type ExecutionStatus,
  type Outcome,
  StorageWriteError,
  statusAfter,
} from '@skein/workflow-runtime';
import type Database from 'better-sqlite3';
import { type HeadRow, insertEvent, selectHead, upsertHead } from './event-queries.js';

/** The statements one flush runs, prepared once. */
export interface AppendStatements {
  db: Database.Database;
  selectHead: Database.Statement<[string], HeadRow>;
  insertEvent: ReturnType<typeof insertEvent>;
  upsertHead: ReturnType<typeof upsertHead>;
  begin: Database.Statement<[]>;
  commit: Database.Statement<[]>;
  rollback: Database.Statement<[]>;
  savepoint: Database.Statement<[]>;
  rollbackToSavepoint: Database.Statement<[]>;
  releaseSavepoint: Database.Statement<[]>;
}

/** Prepare the statements of {@link flushAppends} on `db`. */
export function prepareAppendStatements(db: Database.Database): AppendStatements {
  return {
    db,
    selectHead: selectHead(db),
    insertEvent: insertEvent(db),
    upsertHead: upsertHead(db),
    begin: db.prepare('BEGIN IMMEDIATE'),
    commit: db.prepare('COMMIT'),
    rollback: db.prepare('ROLLBACK'),
    savepoint: db.prepare('SAVEPOINT skein_append'),
    rollbackToSavepoint: db.prepare('ROLLBACK TO skein_append'),
    releaseSavepoint: db.prepare('RELEASE skein_append'),
  };
}

/**
 * Write a batch in one transaction; one outcome per request, in order. Requests for the same
 * execution are applied in order, each seeing the head the previous one left. When the
 * transaction itself fails (BEGIN, COMMIT, or an error that is not one request's refusal),
 * every request that was not refused on its own gets a `StorageWriteError` with the cause.
 */
export function flushAppends(
  sql: AppendStatements,
  batch: readonly AppendRequest[],
  maxPayloadBytes: number,
): Outcome<AppendResult>[] {
  const outcomes: Outcome<AppendResult>[] = [];
  try {
    sql.begin.run();
    const head: ExecutionHead = { fence: 0, lastSeq: -1, status: undefined, workflow: undefined };
    for (const request of batch) outcomes.push(applyOne(sql, request, head, maxPayloadBytes));
    sql.commit.run();
    return outcomes;
  } catch (error) {
    const cause = rollbackAfter(sql, error);
    return batch.map((request, i) => {
      const outcome = outcomes[i];
      // A request refused on its own stays refused: its refusal holds whatever the batch did.
      return outcome !== undefined && !outcome.ok
        ? outcome
        : { ok: false, error: new StorageWriteError(request.executionId, { cause }) };
    });
  }
}

/** Roll the batch back if SQLite has not already; returns what the callers should see as cause. */
function rollbackAfter(sql: AppendStatements, error: unknown): unknown {
  if (!sql.db.inTransaction) return error;
  try {
    sql.rollback.run();
    return error;
  } catch (rollbackError) {
    return new AggregateError([error, rollbackError], 'append batch failed and so did its rollback');
  }
}

/** Check and write one request; a refusal is returned, anything else is thrown to fail the batch. */
function applyOne(
  sql: AppendStatements,
  request: AppendRequest,
  head: ExecutionHead,
  maxPayloadBytes: number,
): Outcome<AppendResult> {
  readHead(sql, request.executionId, head);
  try {
    checkAppend(head, request, maxPayloadBytes);
  } catch (error) {
    return { ok: false, error };
  }
  // One INSERT is atomic on its own, so a single-event request needs no savepoint: if it is
  // refused, nothing of it was written. Only multi-event requests pay for one.
  const guarded = request.events.length > 1;
  if (guarded) sql.savepoint.run();
  let seq = request.expectedSeq;
  let status = head.status;
  let recordedAt = 0;
  try {
    for (const event of request.events) {
      sql.insertEvent.run(
        request.executionId,
        seq,
        event.envelopeId,
        event.type,
        event.payload,
        request.fence,
        event.recordedAt,
      );
      status = statusAfter(status, event.type);
      recordedAt = event.recordedAt;
      seq += 1;
    }
  } catch (error) {
    const refusal = constraintRefusal(error, request, seq);
    if (refusal === undefined) throw error;
    if (guarded) {
      sql.rollbackToSavepoint.run();
      sql.releaseSavepoint.run();
    }
    return { ok: false, error: refusal };
  }
  const lastSeq = seq - 1;
  sql.upsertHead.run(request.executionId, request.workflow, status as ExecutionStatus, lastSeq, recordedAt);
  if (guarded) sql.releaseSavepoint.run();
  return { ok: true, value: { lastSeq, status: status as ExecutionStatus } };
}

/** Fill `head` from the execution's row (a fresh execution has fence 0 and last seq -1). */
function readHead(sql: AppendStatements, executionId: string, head: ExecutionHead): void {
  const row = sql.selectHead.get(executionId);
  head.fence = row?.fence ?? 0;
  head.lastSeq = row?.lastSeq ?? -1;
  head.status = row?.status ?? undefined;
  head.workflow = row?.workflow ?? undefined;
}

/** Map a unique-constraint failure to the refusal it means, or undefined for anything else. */
function constraintRefusal(error: unknown, request: AppendRequest, seq: number): Error | undefined {
  if (!(error instanceof Error) || !('code' in error)) return undefined;
  const event = request.events[seq - request.expectedSeq];
  if (error.code === 'SQLITE_CONSTRAINT_UNIQUE' && error.message.includes('skein_events.envelope_id')) {
    return new DuplicateEnvelopeIdError(request.executionId, event?.envelopeId ?? '', { cause: error });
  }
  if (error.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' && error.message.includes('skein_events.')) {
    return new DuplicateSequenceError(request.executionId, seq, { cause: error });
  }
  return undefined;
}
