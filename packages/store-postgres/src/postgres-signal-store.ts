/**
 * {@link SignalStore} on PostgreSQL, the signal inbox: signals
 * wait outside the log until a run consumes them. A new signal notifies the `signals` wake-up
 * channel (payload: its execution id) in the same statement, so the holder can react at once.
 * Text holding U+0000 is refused with `NulInTextError` by `send`; an id holding it matches no signal.
 */
import type { Signal, SignalStore } from '@skein/workflow-runtime';
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
  async send(signal: Signal): Promise<void> {
    refuseNul('signals.send', signal.executionId, {
      'the signal id': signal.signalId,
      'the execution id': signal.executionId,
      'the signal name': signal.name,
      'the payload': signal.payload,
    });
    await this.db.query('signals.send', insertSignal(signal, this.channel));
  }

  /** The signals of one execution still in the inbox, first sent first. */
  async pending(executionId: string): Promise<Signal[]> {
    if (hasNul(executionId)) return [];
    return (await this.db.query<Signal>('signals.pending', selectPending(executionId))).rows;
  }

  /** Delete a signal (consumed, or its execution ended); unknown ids are ignored. */
  async complete(signalId: string): Promise<void> {
    if (hasNul(signalId)) return;
    await this.db.query('signals.complete', deleteSignal(signalId));
  }
}

/** Insert a signal unless its id exists; notify `channel` with its execution id when it is new. */
function insertSignal(signal: Signal, channel: string): Query {
  return {
    name: 'skein_insert_signal',
    text:
      'WITH added AS (INSERT INTO skein_signals (signal_id, execution_id, name, payload, sent_at) ' +
      'VALUES ($1, $2, $3, $4, $5) ON CONFLICT (signal_id) DO NOTHING RETURNING execution_id) ' +
      'SELECT pg_notify($6, execution_id) FROM added',
    values: [signal.signalId, signal.executionId, signal.name, signal.payload, signal.sentAt, channel],
  };
}

/** The inbox of one execution in arrival order (index skein_signals_execution). */
function selectPending(executionId: string): Query {
  return {
    name: 'skein_select_pending_signals',
    text:
      'SELECT signal_id AS "signalId", execution_id AS "executionId", name, payload, sent_at AS "sentAt" ' +
      'FROM skein_signals WHERE execution_id = $1 ORDER BY position',
    values: [executionId],
  };
}

/** Delete one signal. */
function deleteSignal(signalId: string): Query {
  return {
    name: 'skein_delete_signal',
    text: 'DELETE FROM skein_signals WHERE signal_id = $1',
    values: [signalId],
  };
}
