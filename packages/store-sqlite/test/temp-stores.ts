/** SQLite stores on a file in a fresh temp dir; closing them removes the dir. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStores, type SqliteStores, type SqliteStoresOptions } from '@skein/store-sqlite';

/** A fresh temp dir and the database path inside it. */
export function tempDatabase(): { dir: string; path: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'skein-sqlite-'));
  return { dir, path: join(dir, 'skein.db'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Open stores on a new file; `close()` also deletes the file. */
export function openTempStores(options: Omit<SqliteStoresOptions, 'path'> = {}): SqliteStores {
  const db = tempDatabase();
  const stores = openSqliteStores({ ...options, path: db.path });
  return {
    ...stores,
    async close() {
      await stores.close();
      db.remove();
    },
  };
}
