/**
 * {@link SnapshotStore} on PostgreSQL: the newest snapshot per execution. Text holding U+0000 is
 * refused with `NulInTextError` by `put`; an execution id holding it has no snapshot.
 */
import type { SnapshotStore } from '@skein/workflow-runtime';
import type { Snapshot } from '@skein/workflow-runtime/spi';
import type { Database, Query } from './database.js';
import { hasNul, refuseNul } from './nul-text.js';

/** Snapshots in PostgreSQL; a put never replaces a newer snapshot with an older one. */
export class PostgresSnapshotStore implements SnapshotStore {
  /** @param db the shared pool, with the schema migrated (see `openPostgresStores`). */
  constructor(private readonly db: Database) {}

  async put(snapshot: Snapshot): Promise<void> {
    refuseNul('snapshots.put', snapshot.executionId, {
      'the execution id': snapshot.executionId,
      'the state': snapshot.state,
    });
    await this.db.query('snapshots.put', upsertSnapshot(snapshot));
  }

  async latest(executionId: string): Promise<Snapshot | null> {
    if (hasNul(executionId)) return null;
    return (await this.db.query<Snapshot>('snapshots.latest', selectSnapshot(executionId))).rows[0] ?? null;
  }

  async delete(executionId: string): Promise<void> {
    if (hasNul(executionId)) return;
    await this.db.query('snapshots.delete', deleteSnapshot(executionId));
  }
}

/** Insert, or replace when the new seq is not older. */
function upsertSnapshot(snapshot: Snapshot): Query {
  return {
    name: 'skein_upsert_snapshot',
    text:
      'INSERT INTO skein_snapshots AS s (execution_id, seq, state) VALUES ($1, $2, $3) ' +
      'ON CONFLICT (execution_id) DO UPDATE SET seq = excluded.seq, state = excluded.state ' +
      'WHERE excluded.seq >= s.seq',
    values: [snapshot.executionId, snapshot.seq, snapshot.state],
  };
}

/** The snapshot of one execution. */
function selectSnapshot(executionId: string): Query {
  return {
    name: 'skein_select_snapshot',
    text: 'SELECT execution_id AS "executionId", seq, state FROM skein_snapshots WHERE execution_id = $1',
    values: [executionId],
  };
}

/** Delete the snapshot of one execution. */
function deleteSnapshot(executionId: string): Query {
  return {
    name: 'skein_delete_snapshot',
    text: 'DELETE FROM skein_snapshots WHERE execution_id = $1',
    values: [executionId],
  };
}
