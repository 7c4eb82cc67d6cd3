/** Group commit on SQLite: a failed COMMIT fails every caller it would have written for. */

import { openSqliteStores } from '@skein/store-sqlite';
import { StaleFenceError, StorageWriteError } from '@skein/workflow-runtime';
import type { AppendRequest } from '@skein/workflow-runtime/spi';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDatabase } from './temp-stores.js';

function request(executionId: string, seq: number, fence = 0): AppendRequest {
  return {
    executionId,
    workflow: 'wf',
    expectedSeq: seq,
    fence,
    events: [
      {
        envelopeId: `${executionId}-${seq}`,
        type: seq === 0 ? 'EXECUTION_STARTED' : 'STEP_STARTED',
        payload: '{}',
        recordedAt: 1,
      },
    ],
  };
}

/**
 * Make every COMMIT that wrote an event of `poison` fail honestly: a trigger inserts a row that
 * violates a DEFERRED foreign key, which SQLite only checks at COMMIT (foreign_keys is ON).
 */
function poisonCommitsFor(path: string, poison: string): void {
  const raw = new Database(path);
  raw.exec(`
    CREATE TABLE test_parent (id TEXT PRIMARY KEY);
    CREATE TABLE test_child (parent TEXT REFERENCES test_parent (id) DEFERRABLE INITIALLY DEFERRED);
    CREATE TRIGGER test_poison AFTER INSERT ON skein_events WHEN NEW.execution_id = '${poison}'
    BEGIN INSERT INTO test_child VALUES ('missing'); END;
  `);
  raw.close();
}

describe('sqlite group commit', () => {
  const dbs: ReturnType<typeof tempDatabase>[] = [];
  afterEach(() => {
    for (const db of dbs.splice(0)) db.remove();
  });

  it('L4: when COMMIT fails, every caller of the batch gets StorageWriteError and nothing is written', async () => {
    const db = tempDatabase();
    dbs.push(db);
    const stores = openSqliteStores({ path: db.path });
    try {
      await stores.events.append(request('stale', 0));
      await stores.events.acquireFence('stale');
      poisonCommitsFor(db.path, 'poison');

      const batch = [
        request('good-1', 0),
        request('poison', 0),
        request('good-2', 0),
        request('stale', 1, 0),
      ];
      const settled = await Promise.allSettled(batch.map((item) => stores.events.append(item)));

      const reasons = settled.map((result) =>
        result.status === 'rejected' ? (result.reason as Error) : undefined,
      );
      for (const [i, reason] of reasons.slice(0, 3).entries()) {
        expect(reason).toBeInstanceOf(StorageWriteError);
        expect(reason).toMatchObject({ executionId: batch[i]!.executionId });
        expect(reason?.cause).toMatchObject({ code: 'SQLITE_CONSTRAINT_FOREIGNKEY' });
      }
      // A request refused on its own keeps its own refusal.
      expect(reasons[3]).toBeInstanceOf(StaleFenceError);
      for (const id of ['good-1', 'poison', 'good-2'])
        expect(await stores.events.getExecution(id)).toBeNull();
      expect(await stores.events.read('stale')).toHaveLength(1);

      // The connection is healthy afterwards: the next batch commits.
      expect(await stores.events.append(request('good-1', 0))).toEqual({ lastSeq: 0, status: 'pending' });
    } finally {
      await stores.close();
    }
  });

  it('L4: a batch with several appends for one execution commits them in order in one transaction', async () => {
    const db = tempDatabase();
    dbs.push(db);
    const stores = openSqliteStores({ path: db.path });
    try {
      const fired = [0, 1, 2, 3].map((seq) => stores.events.append(request('chain', seq)));
      expect((await Promise.all(fired)).map((result) => result.lastSeq)).toEqual([0, 1, 2, 3]);
      expect((await stores.events.read('chain')).map((event) => event.envelopeId)).toEqual([
        'chain-0',
        'chain-1',
        'chain-2',
        'chain-3',
      ]);
    } finally {
      await stores.close();
    }
  });
});
