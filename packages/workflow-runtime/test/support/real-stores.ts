/**
 * Every real store, opened fresh: memory, a SQLite file in a temp dir, and a PostgreSQL schema
 * of its own (dropped on close). PostgreSQL is left out, loudly, when no server answers (and
 * its absence fails the run under `CI=true`; see store-postgres/test/support/pg.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStores } from '@skein/store-sqlite';
import { openMemoryStores, type Stores } from '@skein/workflow-runtime';
import { openTestStores, pgReachable, whenPostgres } from '../../../store-postgres/test/support/pg.js';

/** Opens fresh, empty stores; closing them removes what they wrote. */
export type OpenStores = () => Promise<Stores>;

async function openSqlite(): Promise<Stores> {
  const dir = mkdtempSync(join(tmpdir(), 'skein-real-'));
  const stores = openSqliteStores({ path: join(dir, 'skein.db'), durability: 'normal' });
  return {
    ...stores,
    async close() {
      await stores.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `[name, open]` of every store to run against, for `describe.each`. */
export const realStores: [string, OpenStores][] = [
  ['memory', async () => openMemoryStores()],
  ['sqlite', openSqlite],
  ...(pgReachable ? [['postgres', () => openTestStores()] as [string, OpenStores]] : []),
];

// Without a server, one skipped test says so in the run's output.
whenPostgres(() => {});
