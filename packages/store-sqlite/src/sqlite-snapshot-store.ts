/** {@link SnapshotStore} on SQLite: the newest snapshot per execution. */
import type { SnapshotStore } from '@skein/workflow-runtime';
import type { Snapshot } from '@skein/workflow-runtime/spi';
import type Database from 'better-sqlite3';

type Db = Database.Database;

/** Snapshots in SQLite; a put never replaces a newer snapshot with an older one. */
export class SqliteSnapshotStore implements SnapshotStore {
  private readonly upsert: ReturnType<typeof upsertSnapshot>;
  private readonly select: ReturnType<typeof selectSnapshot>;
  private readonly remove: ReturnType<typeof deleteSnapshots>;

  /** @param db an open connection with the schema migrated (see `openSqliteStores`). */
  constructor(db: Db) {
    this.upsert = upsertSnapshot(db);
    this.select = selectSnapshot(db);
    this.remove = deleteSnapshots(db);
  }

  async put(snapshot: Snapshot): Promise<void> {
    this.upsert.run(snapshot.executionId, snapshot.seq, snapshot.state);
  }

  async latest(executionId: string): Promise<Snapshot | null> {
    return this.select.get(executionId) ?? null;
  }

  async delete(executionId: string): Promise<void> {
    this.remove.run(executionId);
  }
}

/** Insert, or replace when the new seq is not older (id, seq, state). */
function upsertSnapshot(db: Db): Database.Statement<[string, number, string]> {
  return db.prepare(
    'INSERT INTO skein_snapshots (execution_id, seq, state) VALUES (?, ?, ?) ' +
      'ON CONFLICT (execution_id) DO UPDATE SET seq = excluded.seq, state = excluded.state ' +
      'WHERE excluded.seq >= skein_snapshots.seq',
  );
}

/** The snapshot of one execution. */
function selectSnapshot(db: Db): Database.Statement<[string], Snapshot> {
  return db.prepare(
    'SELECT execution_id AS executionId, seq, state FROM skein_snapshots WHERE execution_id = ?',
  );
}

/** Delete the snapshot of one execution. */
function deleteSnapshots(db: Db): Database.Statement<[string]> {
  return db.prepare('DELETE FROM skein_snapshots WHERE execution_id = ?');
}
