/**
 * {@link SignalStore} on PostgreSQL, the signal inbox, keyed by (execution, signal id):
 * signals wait outside the log until a run consumes them. A send is one call of
 * `skein_send_signal` (migration 0008), which takes the execution's turn, checks the id and
 * the bound, inserts, and notifies the `signals` wake-up channel (payload: the execution id),
 * so the holder can react at once. Text holding U+0000 is refused with `NulInTextError` by
 * `send`; an id or name holding it matches no signal.
 */
import {
  maxPendingOf,
  type PendingSignalsQuery,
  pendingLimitOf,
  type SendSignalOptions,
  type Signal,
  type SignalSendOutcome,
  type SignalStore,
} from '@skein/workflow-runtime/spi';
import type { Database, Query } from './database.js';
import { hasNul, refuseNul } from './nul-text.js';
import { channelName, WAKEUP_SIGNALS } from './wakeups.js';

/** Signals in PostgreSQL; a resent `signalId` is left as it is (the first send stands). */
export class PostgresSignalStore implements SignalStore {
  private readonly channel: string;

  /** @param db the shared pool, with the schema migrated (see `openPostgresStores`). */
  constructor(private readonly db: Database) {
    this.channel = channelName(db.schema, WAKEUP_SIGNALS);
  }

  /** Keep a signal; a new one sends its execution id on the `signals` wake-up channel at commit. */
  async send(signal: Signal, options?: SendSignalOptions): Promise<SignalSendOutcome> {
    const maxPending = maxPendingOf(options);
    refuseNul('signals.send', signal.executionId, {
      'the signal id': signal.signalId,
      'the execution id': signal.executionId,
      'the signal name': signal.name,
      'the payload': signal.payload,
    });
    const result = await this.db.query<{ outcome: SignalSendOutcome }>(
      'signals.send',
      sendSignal(signal, maxPending, this.channel),
    );
    return result.rows[0]!.outcome;
  }

  /** Waiting signals of one execution, first sent first, filtered and bounded by `query`. */
  async pending(executionId: string, query?: PendingSignalsQuery): Promise<Signal[]> {
    const limit = pendingLimitOf(query);
    const after = query?.after ?? null;
    if (hasNul(executionId) || (after !== null && hasNul(after))) return [];
    const names = query?.names?.filter((name) => !hasNul(name));
    if (names?.length === 0) return [];
    const statement =
      names === undefined
        ? selectWaiting(executionId, after, limit)
        : names.length === 1
          ? selectWaitingOfName(executionId, names[0]!, after, limit)
          : selectWaitingOfNames(executionId, names, after, limit);
    return (await this.db.query<Signal>('signals.pending', statement)).rows;
  }

  /** Mark a signal consumed (its id stays taken until `clear`); unknown ids are ignored. */
  async complete(executionId: string, signalId: string): Promise<void> {
    if (hasNul(executionId) || hasNul(signalId)) return;
    await this.db.query('signals.complete', markConsumed(executionId, signalId));
  }

  /** Delete every signal of the execution, waiting or consumed. */
  async clear(executionId: string): Promise<void> {
    if (hasNul(executionId)) return;
    await this.db.query('signals.clear', deleteInbox(executionId));
  }
}

/** Send through `skein_send_signal`: 'sent', 'duplicate' or 'inbox-full'. */
function sendSignal(signal: Signal, maxPending: number, channel: string): Query {
  return {
    name: 'skein_send_signal',
    text: 'SELECT skein_send_signal($1, $2, $3, $4, $5, $6, $7) AS outcome',
    values: [
      signal.signalId,
      signal.executionId,
      signal.name,
      signal.payload,
      signal.sentAt,
      maxPending,
      channel,
    ],
  };
}

const COLUMNS =
  'SELECT signal_id AS "signalId", execution_id AS "executionId", name, payload, sent_at AS "sentAt" ' +
  'FROM skein_signals';

/**
 * The place to page from: 0 with no cursor, the cursor signal's position, or NULL (no rows)
 * when the execution has no signal of that id. `$1` is the execution, `$2` the cursor.
 */
const AFTER =
  '(CASE WHEN $2::text IS NULL THEN 0 ' +
  'ELSE (SELECT position FROM skein_signals WHERE execution_id = $1 AND signal_id = $2) END)';

/** Waiting signals of an execution after the cursor, in send order (index skein_signals_inbox). */
function selectWaiting(executionId: string, after: string | null, limit: number): Query {
  return {
    name: 'skein_select_waiting_signals',
    text: `${COLUMNS} WHERE execution_id = $1 AND NOT consumed AND position > ${AFTER} ORDER BY position LIMIT $3`,
    values: [executionId, after, limit],
  };
}

/** Waiting signals of one name after the cursor, in send order (index skein_signals_waiting). */
function selectWaitingOfName(executionId: string, name: string, after: string | null, limit: number): Query {
  return {
    name: 'skein_select_waiting_signals_of_name',
    text:
      `${COLUMNS} WHERE execution_id = $1 AND NOT consumed AND name = $4 ` +
      `AND position > ${AFTER} ORDER BY position LIMIT $3`,
    values: [executionId, after, limit, name],
  };
}

/** Waiting signals of any of the names after the cursor, in send order. */
function selectWaitingOfNames(
  executionId: string,
  names: readonly string[],
  after: string | null,
  limit: number,
): Query {
  return {
    name: 'skein_select_waiting_signals_of_names',
    text:
      `${COLUMNS} WHERE execution_id = $1 AND NOT consumed AND name = ANY($4::text[]) ` +
      `AND position > ${AFTER} ORDER BY position LIMIT $3`,
    values: [executionId, after, limit, names],
  };
}

/** Mark one signal consumed and drop its payload; its row keeps the id taken. */
function markConsumed(executionId: string, signalId: string): Query {
  return {
    name: 'skein_consume_signal',
    text:
      "UPDATE skein_signals SET consumed = true, payload = '' " +
      'WHERE execution_id = $1 AND signal_id = $2 AND NOT consumed',
    values: [executionId, signalId],
  };
}

/** Delete an execution's whole inbox, consumed rows included. */
function deleteInbox(executionId: string): Query {
  return {
    name: 'skein_clear_signals',
    text: 'DELETE FROM skein_signals WHERE execution_id = $1',
    values: [executionId],
  };
}
