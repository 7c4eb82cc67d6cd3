/**
 * The group-commit flush (L4): one BEGIN IMMEDIATE … COMMIT for the whole batch, each request
 * checked with `checkAppend` against the head row and written inside its own SAVEPOINT, so a
 * refused request rolls back alone and every caller gets its own outcome.
 */
import {
  DuplicateEnvelopeIdError,
  DuplicateSequenceError,
  type ExecutionStatus,
  InvalidAppendError,
  StorageWriteError,
} from '@skein/workflow-runtime';
import {
  type AppendRequest,
  type AppendResult,
  checkAppend,
  type ExecutionHead,
  type Outcome,
  statusAfter,
} from '@skein/workflow-runtime/spi';
import type Database from 'better-sqlite3';
import { type HeadRow, insertEvent, selectHead, updateStatus, upsertHead } from './event-queries.js';
import { HeadCache } from './head-cache.js';
import { insertOutboxMessage } from './outbox-queries.js';
import { isTakenMessageId } from './sqlite-outbox-store.js';

/** The statements one flush runs, prepared once. */
export interface AppendStatements {
  db: Database.Database;
  selectHead: Database.Statement<[string], HeadRow>;
  insertEvent: ReturnType<typeof insertEvent>;
  upsertHead: ReturnType<typeof upsertHead>;
  updateStatus: ReturnType<typeof updateStatus>;
  insertOutbox: ReturnType<typeof insertOutboxMessage>;
  outboxTaken: Database.Statement<[string], unknown>;
  begin: Database.Statement<[]>;
  commit: Database.Statement<[]>;
  rollback: Database.Statement<[]>;
  savepoint: Database.Statement<[]>;
  rollbackToSavepoint: Database.Statement<[]>;
  releaseSavepoint: Database.Statement<[]>;
  heads: HeadCache;
}

/** Prepare the statements of {@link flushAppends} on `db`. */
export function prepareAppendStatements(db: Database.Database): AppendStatements {
  return {
    db,
    selectHead: selectHead(db),
    insertEvent: insertEvent(db),
    upsertHead: upsertHead(db),
    updateStatus: updateStatus(db),
    insertOutbox: insertOutboxMessage(db),
    outboxTaken: db.prepare('SELECT 1 FROM skein_outbox_events WHERE message_id = ?'),
    begin: db.prepare('BEGIN IMMEDIATE'),
    commit: db.prepare('COMMIT'),
    rollback: db.prepare('ROLLBACK'),
    savepoint: db.prepare('SAVEPOINT skein_append'),
    rollbackToSavepoint: db.prepare('ROLLBACK TO skein_append'),
    releaseSavepoint: db.prepare('RELEASE skein_append'),
    heads: new HeadCache(db),
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
  try {
    return flushOnce(sql, batch, maxPayloadBytes, { guarded: false });
  } catch (error) {
    if (!(error instanceof NeedsSavepoints)) throw error;
    // A multi-event request hit a constraint after some of its rows were in: redo the batch
    // with a savepoint around each such request, so that request rolls back alone.
    return flushOnce(sql, batch, maxPayloadBytes, { guarded: true });
  }
}

const NO_MESSAGES: NonNullable<AppendRequest['outbox']> = [];

/** Thrown out of an unguarded pass when a request needs its own rollback. */
class NeedsSavepoints extends Error {}

function flushOnce(
  sql: AppendStatements,
  batch: readonly AppendRequest[],
  maxPayloadBytes: number,
  how: { guarded: boolean },
): Outcome<AppendResult>[] {
  const outcomes: Outcome<AppendResult>[] = [];
  try {
    sql.begin.run();
    sql.heads.revalidate();
    const head: ExecutionHead = { fence: 0, lastSeq: -1, status: undefined, workflow: undefined };
    for (const request of batch) outcomes.push(applyOne(sql, request, head, maxPayloadBytes, how));
    sql.commit.run();
    return outcomes;
  } catch (error) {
    sql.heads.clear();
    const cause = rollbackAfter(sql, error);
    if (error instanceof NeedsSavepoints) throw error;
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

/**
 * Check and write one request; a refusal is returned, anything else is thrown to fail the
 * batch. Unguarded, a constraint failure in a multi-event request throws NeedsSavepoints
 * (its earlier rows are in); guarded, such a request runs inside a savepoint. A single INSERT
 * is atomic on its own, so a single-event request never needs one.
 */
function applyOne(
  sql: AppendStatements,
  request: AppendRequest,
  head: ExecutionHead,
  maxPayloadBytes: number,
  { guarded }: { guarded: boolean },
): Outcome<AppendResult> {
  if (!sql.heads.get(request.executionId, head)) readHead(sql, request.executionId, head);
  try {
    checkAppend(head, request, maxPayloadBytes);
  } catch (error) {
    return { ok: false, error };
  }
  const messages = request.outbox ?? NO_MESSAGES;
  for (const message of messages) {
    if (sql.outboxTaken.get(message.id) === undefined) continue;
    const reason = `outbox message id "${message.id}" is taken`;
    return { ok: false, error: new InvalidAppendError(request.executionId, reason) };
  }
  const savepoint = guarded && (request.events.length > 1 || messages.length > 0);
  if (savepoint) sql.savepoint.run();
  let seq = request.expectedSeq;
  let status = head.status;
  let wrote = false;
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
      seq += 1;
      wrote = true;
    }
    // O1: the messages commit with the events or not at all.
    for (const message of messages) sql.insertOutbox(message);
  } catch (error) {
    const refusal = constraintRefusal(error, request, seq);
    if (refusal === undefined) throw error;
    if (wrote && !savepoint) throw new NeedsSavepoints();
    if (savepoint) {
      sql.rollbackToSavepoint.run();
      sql.releaseSavepoint.run();
    }
    return { ok: false, error: refusal };
  }
  const lastSeq = seq - 1;
  // The log holds the last seq; the head row changes only with the status (or at seq 0).
  if (request.expectedSeq === 0) {
    sql.upsertHead.run(request.executionId, request.workflow, status as ExecutionStatus);
  } else if (status !== head.status) {
    sql.updateStatus.run(status as ExecutionStatus, request.executionId);
  }
  if (savepoint) sql.releaseSavepoint.run();
  head.lastSeq = lastSeq;
  head.status = status;
  if (request.expectedSeq === 0) head.workflow = request.workflow;
  sql.heads.set(request.executionId, head);
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
  if (isTakenMessageId(error)) {
    return new InvalidAppendError(
      request.executionId,
      `an outbox message id is taken (${(error as Error).message})`,
    );
  }
  if (error.code === 'SQLITE_CONSTRAINT_UNIQUE' && error.message.includes('skein_events.envelope_id')) {
    return new DuplicateEnvelopeIdError(request.executionId, event?.envelopeId ?? '', { cause: error });
  }
  if (error.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' && error.message.includes('skein_events.')) {
    return new DuplicateSequenceError(request.executionId, seq, { cause: error });
  }
  return undefined;
}
