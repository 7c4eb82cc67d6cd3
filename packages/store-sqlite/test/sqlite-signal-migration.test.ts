/**
 * Migration 0008 scopes signal ids to their execution on a file written by an older version:
 * every waiting signal is kept, in its send order, and an id another execution holds is no
 * longer a reason to drop a signal (issue 15.3).
 */
import { openSqliteStores } from '@skein/store-sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { openConnection } from '../src/connection.js';
import { loadMigrations, migrate } from '../src/migrate.js';
import { tempDatabase } from './temp-stores.js';

describe('sqlite signal inbox migration', () => {
  const dbs: ReturnType<typeof tempDatabase>[] = [];
  afterEach(() => {
    for (const db of dbs.splice(0)) db.remove();
  });

  it('0008 keeps every signal of a 0007 file in send order, and the same id then reaches another execution', async () => {
    const file = tempDatabase();
    dbs.push(file);
    const old = openConnection({ path: file.path });
    migrate(
      old,
      loadMigrations().filter((migration) => migration.id <= 7),
    );
    const insert = old.prepare(
      'INSERT INTO skein_signals (signal_id, execution_id, name, payload, sent_at) VALUES (?, ?, ?, ?, ?)',
    );
    insert.run('z-first', 'a', 'approve', '"1"', 10);
    insert.run('shared', 'a', 'approve', '"2"', 11);
    insert.run('b-only', 'b', 'note', '"3"', 12);
    insert.run('a-last', 'a', 'note', '"4"', 13);
    old.close();

    const stores = openSqliteStores({ path: file.path });
    try {
      const signal = (
        signalId: string,
        executionId: string,
        name: string,
        payload: string,
        sentAt: number,
      ) => ({
        signalId,
        executionId,
        name,
        payload,
        sentAt,
      });
      expect(await stores.signals.pending('a')).toEqual([
        signal('z-first', 'a', 'approve', '"1"', 10),
        signal('shared', 'a', 'approve', '"2"', 11),
        signal('a-last', 'a', 'note', '"4"', 13),
      ]);
      expect(await stores.signals.pending('b')).toEqual([signal('b-only', 'b', 'note', '"3"', 12)]);
      // Before 0008 this send was dropped: "shared" was taken by execution a.
      expect(await stores.signals.send(signal('shared', 'b', 'approve', '"5"', 14))).toBe('sent');
      expect(await stores.signals.send(signal('shared', 'a', 'approve', '"6"', 15))).toBe('duplicate');
      // New signals come after the migrated ones.
      expect(await stores.signals.send(signal('new', 'a', 'approve', '"7"', 16))).toBe('sent');
      expect((await stores.signals.pending('a', { names: ['approve'] })).map((s) => s.signalId)).toEqual([
        'z-first',
        'shared',
        'new',
      ]);
      expect((await stores.signals.pending('b')).map((s) => s.signalId)).toEqual(['b-only', 'shared']);
    } finally {
      await stores.close();
    }
  });
});
