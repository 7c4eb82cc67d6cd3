/** Skein on a SQLite file (group commit, WAL), at durability `full` or `normal`. */
import { join } from 'node:path';
import { openSqliteStores } from '@skein/store-sqlite';
import type { EngineSpec } from './engine.js';
import { skeinEngine } from './skein.js';

/** Skein on SQLite with the given durability. */
export function skeinSqlite(durability: 'full' | 'normal'): EngineSpec {
  const name = `skein sqlite ${durability}`;
  return {
    name,
    kind: 'skein',
    store: durability === 'full' ? 'sqlite-full' : 'sqlite-normal',
    tags: ['sqlite', 'skein'],
    async open({ dir }) {
      const stores = openSqliteStores({ path: join(dir, 'skein.db'), durability });
      return skeinEngine(name, stores, () => stores.close());
    },
  };
}
