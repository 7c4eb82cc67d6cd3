/**
 * The non-public fields of `pg.Connection` that write-statement.ts relies on
 * (`parsedStatements`, `submittedNamedStatements`, `stream`), asserted by name and by what pg
 * does with them, so that a pg release that drops or repurposes one fails here first. pg's
 * minor version is pinned in package.json for the same reason.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { WriteStatement } from '../src/write-statement.js';
import { PG_URL, whenPostgres } from './support/pg.js';

/** The connection of a client, as write-statement.ts reads it. */
function connectionOf(client: pg.Client): {
  stream: { write?: unknown };
  parsedStatements?: Record<string, string | undefined>;
  submittedNamedStatements?: Record<string, string | undefined>;
} {
  return (client as unknown as { connection: never }).connection;
}

describe('pg.Connection fields a write statement uses', () => {
  it('a new connection has parsedStatements, submittedNamedStatements and a writable stream', () => {
    const connection = connectionOf(new pg.Client({ connectionString: PG_URL }));
    expect(connection.parsedStatements).toEqual({});
    expect(connection.submittedNamedStatements).toEqual({});
    expect(typeof connection.stream.write).toBe('function');
  });

  whenPostgres(() => {
    let client: pg.Client | undefined;
    afterEach(async () => {
      await client?.end();
      client = undefined;
    });

    it('pg records a named statement in submittedNamedStatements, then in parsedStatements once parsed', async () => {
      client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      const connection = connectionOf(client);
      const text = 'SELECT $1::text AS v';
      const query = client.query({ name: 'pg_internals_read', text, values: ['a'] });
      // Sent, not yet parsed: pg.Query marks it submitted (a write statement marks its own the same way).
      expect(connection.submittedNamedStatements?.pg_internals_read).toBe(text);
      await query;
      expect(connection.parsedStatements?.pg_internals_read).toBe(text);
      expect(connection.submittedNamedStatements?.pg_internals_read).toBeUndefined();
    });

    it('a write statement parses once: the second on the connection finds its name in parsedStatements', async () => {
      client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      const connection = connectionOf(client);
      const query = { name: 'pg_internals_write', text: 'SELECT $1::text', values: ['x'] };
      const run = () =>
        new Promise<number>((resolve, reject) => {
          const statement = new WriteStatement(query, (error, rows) =>
            error === undefined ? resolve(rows) : reject(error),
          );
          (client as unknown as { query(submittable: unknown): void }).query(statement);
        });
      const first = run();
      expect(connection.submittedNamedStatements?.pg_internals_write).toBe(query.text);
      await first;
      expect(connection.parsedStatements?.pg_internals_write).toBe(query.text);
      // The second sends no Parse; a mismatched text under the same name is refused before sending.
      await expect(run()).resolves.toBe(1);
      const other = new WriteStatement({ ...query, text: 'SELECT $1::int' }, () => {});
      expect(other.submit(connectionOf(client) as never)).toBeInstanceOf(Error);
      expect(other.sent).toBe(false);
    });
  });
});
