/**
 * Opening: options are checked before connecting, migrations are applied once under an
 * advisory lock however many processes open at once, schemas stay apart, close is final.
 */
import {
  InvalidPostgresOptionError,
  MigrationError,
  openPostgresStores,
  type PostgresStoresOptions,
  StoreClosedError,
} from '@skein/store-postgres';
import { afterEach, describe, expect, it } from 'vitest';
import { loadMigrations } from '../src/migrate.js';
import { adminQuery, dropSchema, freshSchema, openTestStores, PG_URL, whenPostgres } from './support/pg.js';

const schemas: string[] = [];
afterEach(async () => {
  await Promise.all(schemas.splice(0).map(dropSchema));
});

describe('openPostgresStores options', () => {
  const bad: [string, Partial<PostgresStoresOptions>][] = [
    ['url', { url: '' }],
    ['schema', { schema: 'Skein' }],
    ['schema', { schema: 'a-b' }],
    ['schema', { schema: 'x"; DROP TABLE y; --' }],
    ['schema', { schema: 'pg_temp_x' }],
    ['schema', { schema: 'a'.repeat(64) }],
    ['poolSize', { poolSize: 0 }],
    ['maxPayloadBytes', { maxPayloadBytes: 1.5 }],
  ];
  for (const [option, options] of bad) {
    it(`refuses a bad ${option} (${JSON.stringify(options).slice(0, 40)}) before connecting`, async () => {
      const error = await openPostgresStores({ url: 'postgres://nobody@127.0.0.1:1/none', ...options }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(InvalidPostgresOptionError);
      expect(error).toMatchObject({ option });
    });
  }
});

whenPostgres(() => {
  describe('postgres migrations', () => {
    it('six processes opening one new schema at once apply each migration exactly once', async () => {
      const schema = freshSchema();
      schemas.push(schema);
      const opened = await Promise.all(
        Array.from({ length: 6 }, () => openPostgresStores({ url: PG_URL, schema, poolSize: 1 })),
      );
      await Promise.all(opened.map((stores) => stores.close()));
      const rows = await adminQuery<{ id: number }>(
        `SELECT id FROM "${schema}".skein_migrations ORDER BY id`,
      );
      expect(rows.map((row) => row.id)).toEqual(loadMigrations().map((migration) => migration.id));
    });

    it('a schema migrated by a newer library is refused with MigrationError', async () => {
      const stores = await openTestStores();
      schemas.push(stores.schema);
      await adminQuery(
        `INSERT INTO "${stores.schema}".skein_migrations (id, name, applied_at) VALUES (99, 'future', 0)`,
      );
      const error = await openPostgresStores({ url: PG_URL, schema: stores.schema }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MigrationError);
      expect((error as MigrationError).reason).toContain('migration 99');
      await stores.close();
    });

    it('two schemas in one database keep their executions apart', async () => {
      const a = await openTestStores();
      const b = await openTestStores();
      const started = {
        executionId: 'same-id',
        workflow: 'wf',
        expectedSeq: 0,
        fence: 0,
        events: [
          {
            envelopeId: `apart-${Date.now()}`,
            type: 'EXECUTION_STARTED' as const,
            payload: '{}',
            recordedAt: 1,
          },
        ],
      };
      await a.events.append(started);
      expect(await b.events.getExecution('same-id')).toBeNull();
      expect(await b.events.read('same-id')).toEqual([]);
      expect((await a.events.read('same-id')).map((event) => event.seq)).toEqual([0]);
      await Promise.all([a.close(), b.close()]);
    });

    it('after close every store refuses with StoreClosedError and the pool is gone', async () => {
      const stores = await openTestStores();
      await stores.close();
      await expect(stores.events.read('x')).rejects.toBeInstanceOf(StoreClosedError);
      await expect(stores.timers.nextDueAt()).rejects.toMatchObject({ operation: 'timers.nextDueAt' });
      await expect(stores.leases.get('k')).rejects.toBeInstanceOf(StoreClosedError);
      await expect(stores.wakeups.subscribe('timers', () => {})).rejects.toBeInstanceOf(StoreClosedError);
    });
  });
});
