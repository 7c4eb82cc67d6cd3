/** {@link BlockageStore} on SQLite: one row per execution, recorded in one upsert. */
import type { BlockageStore } from '@skein/workflow-runtime';
import type { Blockage, BlockageFailure } from '@skein/workflow-runtime/spi';
import type Database from 'better-sqlite3';

type Db = Database.Database;

/** Blockages in SQLite, with the semantics of `MemoryBlockageStore`. */
export class SqliteBlockageStore implements BlockageStore {
  private readonly statements: {
    record: ReturnType<typeof upsertBlockage>;
    get: ReturnType<typeof selectBlockage>;
    list: ReturnType<typeof selectBlockagesAfter>;
    clear: ReturnType<typeof deleteBlockage>;
  };

  /** @param db an open connection with the schema migrated (see `openSqliteStores`). */
  constructor(db: Db) {
    this.statements = {
      record: upsertBlockage(db),
      get: selectBlockage(db),
      list: selectBlockagesAfter(db),
      clear: deleteBlockage(db),
    };
  }

  async record(failure: BlockageFailure): Promise<Blockage> {
    return this.statements.record.get(failure)!;
  }

  async get(executionId: string): Promise<Blockage | null> {
    return this.statements.get.get(executionId) ?? null;
  }

  async list(query: { after?: string; limit: number }): Promise<Blockage[]> {
    return this.statements.list.all(query.after ?? '', query.limit);
  }

  async clear(executionId: string): Promise<void> {
    this.statements.clear.run(executionId);
  }
}

const COLUMNS = 'execution_id AS executionId, seq, code, message, since, attempts, last_at AS lastAt';

/** Insert, or count one more attempt at the same seq (keeping since), or start over at another. */
function upsertBlockage(db: Db): Database.Statement<BlockageFailure, Blockage> {
  return db.prepare(
    'INSERT INTO skein_blockages (execution_id, seq, code, message, since, attempts, last_at) ' +
      'VALUES (@executionId, @seq, @code, @message, @at, 1, @at) ON CONFLICT (execution_id) DO UPDATE SET ' +
      'attempts = CASE WHEN skein_blockages.seq = excluded.seq THEN skein_blockages.attempts + 1 ELSE 1 END, ' +
      'since = CASE WHEN skein_blockages.seq = excluded.seq THEN skein_blockages.since ELSE excluded.since END, ' +
      'seq = excluded.seq, code = excluded.code, message = excluded.message, last_at = excluded.last_at ' +
      `RETURNING ${COLUMNS}`,
  );
}

/** The row of one execution. */
function selectBlockage(db: Db): Database.Statement<[string], Blockage> {
  return db.prepare(`SELECT ${COLUMNS} FROM skein_blockages WHERE execution_id = ?`);
}

/** A page of rows after an id, by id. */
function selectBlockagesAfter(db: Db): Database.Statement<[string, number], Blockage> {
  return db.prepare(
    `SELECT ${COLUMNS} FROM skein_blockages WHERE execution_id > ? ORDER BY execution_id LIMIT ?`,
  );
}

/** Delete the row of one execution. */
function deleteBlockage(db: Db): Database.Statement<[string]> {
  return db.prepare('DELETE FROM skein_blockages WHERE execution_id = ?');
}
