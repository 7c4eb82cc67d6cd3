/** {@link SignalStore} on SQLite: the signal inbox; every operation is one statement. */
import type { Signal, SignalStore } from '@skein/workflow-runtime';
import type Database from 'better-sqlite3';

type Db = Database.Database;

/** Signals in SQLite, in send order, with the semantics of `MemorySignalStore`. */
export class SqliteSignalStore implements SignalStore {
  private readonly statements: {
    insert: ReturnType<typeof insertSignal>;
    pending: ReturnType<typeof selectPending>;
    remove: ReturnType<typeof deleteSignal>;
  };

  /** @param db an open connection with the schema migrated (see `openSqliteStores`). */
  constructor(db: Db) {
    this.statements = { insert: insertSignal(db), pending: selectPending(db), remove: deleteSignal(db) };
  }

  async send(signal: Signal): Promise<void> {
    this.statements.insert.run(signal);
  }

  async pending(executionId: string): Promise<Signal[]> {
    return this.statements.pending.all(executionId);
  }

  async complete(signalId: string): Promise<void> {
    this.statements.remove.run(signalId);
  }
}

/** Keep a signal unless its id is already in the inbox. */
function insertSignal(db: Db): Database.Statement<[Signal]> {
  return db.prepare(
    'INSERT INTO skein_signals (signal_id, execution_id, name, payload, sent_at) ' +
      'VALUES (@signalId, @executionId, @name, @payload, @sentAt) ON CONFLICT (signal_id) DO NOTHING',
  );
}

/** One execution's inbox in send order (index skein_signals_execution). */
function selectPending(db: Db): Database.Statement<[string], Signal> {
  return db.prepare(
    'SELECT signal_id AS signalId, execution_id AS executionId, name, payload, sent_at AS sentAt ' +
      'FROM skein_signals WHERE execution_id = ? ORDER BY position',
  );
}

/** Delete one signal. */
function deleteSignal(db: Db): Database.Statement<[string]> {
  return db.prepare('DELETE FROM skein_signals WHERE signal_id = ?');
}
