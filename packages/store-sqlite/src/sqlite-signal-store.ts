/**
 * {@link SignalStore} on SQLite: the signal inbox, keyed by (execution, signal id). A send is
 * one BEGIN IMMEDIATE transaction (is the id taken? is the inbox full? insert), so processes
 * sharing the file never pass the bound; every other operation is one statement.
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
import type Database from 'better-sqlite3';

type Db = Database.Database;

/** What the bounded insert binds. */
interface BoundedInsert extends Signal {
  maxPending: number;
}

/** Signals in SQLite, in send order, with the semantics of `MemorySignalStore`. */
export class SqliteSignalStore implements SignalStore {
  private readonly statements: ReturnType<typeof prepare>;
  private readonly sendOnce: (signal: BoundedInsert) => SignalSendOutcome;

  /** @param db an open connection with the schema migrated (see `openSqliteStores`). */
  constructor(db: Db) {
    const statements = prepare(db);
    this.statements = statements;
    this.sendOnce = db.transaction((signal: BoundedInsert): SignalSendOutcome => {
      if (statements.position.get(signal.executionId, signal.signalId) !== undefined) return 'duplicate';
      return statements.insert.run(signal).changes === 1 ? 'sent' : 'inbox-full';
    }).immediate;
  }

  async send(signal: Signal, options?: SendSignalOptions): Promise<SignalSendOutcome> {
    const maxPending = maxPendingOf(options);
    const { signalId, executionId, name, payload, sentAt } = signal;
    return this.sendOnce({ signalId, executionId, name, payload, sentAt, maxPending });
  }

  async pending(executionId: string, query?: PendingSignalsQuery): Promise<Signal[]> {
    const limit = pendingLimitOf(query);
    let after = 0;
    if (query?.after !== undefined) {
      const from = this.statements.position.get(executionId, query.after);
      if (from === undefined) return [];
      after = from;
    }
    const names = query?.names;
    if (names === undefined) return this.statements.waiting.all(executionId, after, limit);
    if (names.length === 0) return [];
    if (names.length === 1) return this.statements.waitingOfName.all(executionId, names[0]!, after, limit);
    return this.statements.waitingOfNames.all(executionId, JSON.stringify(names), after, limit);
  }

  async complete(executionId: string, signalId: string): Promise<void> {
    this.statements.consume.run(executionId, signalId);
  }

  async clear(executionId: string): Promise<void> {
    this.statements.clear.run(executionId);
  }
}

function prepare(db: Db) {
  return {
    position: selectPosition(db),
    insert: insertBounded(db),
    waiting: selectWaiting(db),
    waitingOfName: selectWaitingOfName(db),
    waitingOfNames: selectWaitingOfNames(db),
    consume: markConsumed(db),
    clear: deleteInbox(db),
  };
}

const COLUMNS =
  'signal_id AS signalId, execution_id AS executionId, name, payload, sent_at AS sentAt FROM skein_signals';

/** The place in send order of one signal of an execution (waiting or consumed), if it has it. */
export function selectPosition(db: Db): Database.Statement<[string, string], number> {
  return db
    .prepare<[string, string], number>(
      'SELECT position FROM skein_signals WHERE execution_id = ? AND signal_id = ?',
    )
    .pluck();
}

/** Insert a signal unless its execution already has `maxPending` waiting (index skein_signals_waiting). */
export function insertBounded(db: Db): Database.Statement<[BoundedInsert]> {
  return db.prepare(
    'INSERT INTO skein_signals (signal_id, execution_id, name, payload, sent_at) ' +
      'SELECT @signalId, @executionId, @name, @payload, @sentAt ' +
      'WHERE (SELECT count(*) FROM skein_signals WHERE execution_id = @executionId AND consumed = 0) < @maxPending',
  );
}

/** Waiting signals of an execution after a position, in send order (index skein_signals_inbox). */
export function selectWaiting(db: Db): Database.Statement<[string, number, number], Signal> {
  return db.prepare(
    `SELECT ${COLUMNS} WHERE execution_id = ? AND consumed = 0 AND position > ? ORDER BY position LIMIT ?`,
  );
}

/** Waiting signals of one name after a position, in send order (index skein_signals_waiting). */
export function selectWaitingOfName(db: Db): Database.Statement<[string, string, number, number], Signal> {
  return db.prepare(
    `SELECT ${COLUMNS} WHERE execution_id = ? AND consumed = 0 AND name = ? AND position > ? ` +
      'ORDER BY position LIMIT ?',
  );
}

/** Waiting signals of any of the names (a JSON array) after a position, in send order. */
export function selectWaitingOfNames(db: Db): Database.Statement<[string, string, number, number], Signal> {
  return db.prepare(
    `SELECT ${COLUMNS} WHERE execution_id = ? AND consumed = 0 ` +
      'AND name IN (SELECT value FROM json_each(?)) AND position > ? ORDER BY position LIMIT ?',
  );
}

/** Mark one signal consumed and drop its payload; its row keeps the id taken. */
export function markConsumed(db: Db): Database.Statement<[string, string]> {
  return db.prepare(
    "UPDATE skein_signals SET consumed = 1, payload = '' WHERE execution_id = ? AND signal_id = ? AND consumed = 0",
  );
}

/** Delete an execution's whole inbox, consumed rows included. */
export function deleteInbox(db: Db): Database.Statement<[string]> {
  return db.prepare('DELETE FROM skein_signals WHERE execution_id = ?');
}
