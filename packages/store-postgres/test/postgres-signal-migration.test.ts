/**
 * Migration 0008 scopes signal ids to their execution on a schema written by an older version:
 * every waiting signal is kept, in its send order, and an id another execution holds is no
 * longer a reason to drop a signal (issue 15.3).
 */
import { openPostgresStores } from '@skein/store-postgres';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { loadMigrations, migrate } from '../src/migrate.js';
import { dropSchema, freshSchema, PG_URL, whenPostgres } from './support/pg.js';

const schemas: string[] = [];
afterEach(async () => {
  await Promise.all(schemas.splice(0).map(dropSchema));
});

const signal = (signalId: string, executionId: string, name: string, payload: string, sentAt: number) => ({
  signalId,
  executionId,
  name,
  payload,
  sentAt,
});

whenPostgres(() => {
  describe('postgres signal inbox migration', () => {
    it('0008 keeps every signal of a 0007 schema in send order, and the same id then reaches another execution', async () => {
      const schema = freshSchema();
      schemas.push(schema);
      const old = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` });
      await old.connect();
      try {
        await migrate(
          old,
          schema,
          loadMigrations().filter((migration) => migration.id <= 7),
        );
        const rows = [
          ['z-first', 'a', 'approve', '"1"', 10],
          ['shared', 'a', 'approve', '"2"', 11],
          ['b-only', 'b', 'note', '"3"', 12],
          ['a-last', 'a', 'note', '"4"', 13],
        ];
        for (const row of rows)
          await old.query(
            'INSERT INTO skein_signals (signal_id, execution_id, name, payload, sent_at) VALUES ($1, $2, $3, $4, $5)',
            row,
          );
      } finally {
        await old.end();
      }

      const stores = await openPostgresStores({ url: PG_URL, schema, poolSize: 2 });
      try {
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
});
