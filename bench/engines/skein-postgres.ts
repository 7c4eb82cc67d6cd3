/** Skein on PostgreSQL, in the default schema of the database it is given (pool of 10, the default). */
import { openPostgresStores } from '@skein/store-postgres';
import type { EngineSpec } from './engine.js';
import { skeinEngine } from './skein.js';

/** Skein on PostgreSQL. */
export const skeinPostgres: EngineSpec = {
  name: 'skein postgres',
  kind: 'skein',
  store: 'postgres',
  tags: ['postgres', 'skein'],
  async open({ pgUrl }) {
    if (pgUrl === undefined) throw new Error('bench: skein postgres needs a database URL');
    const stores = await openPostgresStores({ url: pgUrl });
    return skeinEngine('skein postgres', stores, () => stores.close());
  },
};
