/** The `skein` executable over a real PostgreSQL schema: the shared suite, then connection errors. */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  adminQuery,
  freshSchema,
  openTestStores,
  PG_URL,
  whenPostgres,
} from '../../store-postgres/test/support/pg.js';
import { ensureBuilt, skein } from './support/binary.js';
import { cliSuite } from './support/suite.js';

whenPostgres(() => {
  cliSuite({
    name: 'PostgreSQL',
    async open() {
      const stores = await openTestStores();
      return { args: ['--pg', PG_URL, '--schema', stores.schema], stores, close: () => stores.close() };
    },
  });

  describe('skein on PostgreSQL: connection errors', () => {
    beforeAll(ensureBuilt, 600_000);

    it('a URL that reaches no server names the host and port, and exits 1', async () => {
      const result = await skein(['--pg', 'postgres://root@127.0.0.1:1/test', 'list']);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('postgres://127.0.0.1:1/test');
      expect(result.stderr).toContain('cannot connect to PostgreSQL');
    });

    it('a schema without Skein tables is refused and not created', async () => {
      const schema = freshSchema();
      const result = await skein(['--pg', PG_URL, '--schema', schema, 'list']);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`schema "${schema}" holds no Skein tables`);
      const rows = await adminQuery('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [
        schema,
      ]);
      expect(rows).toEqual([]);
    });
  });
});
