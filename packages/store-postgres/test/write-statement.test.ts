/**
 * The write statement (the step append's way to the server, write-statement.ts) against the real
 * server: it writes what it is given byte for byte, prepares once per connection, reports the
 * server's refusals without losing the connection, refuses a value it cannot send before writing
 * anything, and a connection that dies under it is replaced.
 */
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConnectionPool } from '../src/connection-pool.js';
import type { Query } from '../src/database.js';
import { encodeMessages } from '../src/write-statement.js';
import { adminQuery, freshSchema, PG_URL, whenPostgres } from './support/pg.js';

let schema: string;
let pool: ConnectionPool;

beforeEach(async () => {
  schema = freshSchema();
  await adminQuery(`CREATE SCHEMA "${schema}"`);
  await adminQuery(`CREATE TABLE "${schema}".t (k text PRIMARY KEY, v text, n bigint)`);
  pool = new ConnectionPool({ connectionString: PG_URL, options: `-c search_path=${schema}` }, 1, () => {});
});

afterEach(async () => {
  await pool.end();
  await adminQuery(`DROP SCHEMA "${schema}" CASCADE`);
});

/** `pool.write` as a promise of the row count. */
function write(query: Query): Promise<number> {
  return new Promise((resolve, reject) => {
    pool.write(query, (error, rowCount) => (error === undefined ? resolve(rowCount) : reject(error)));
  });
}

const insert = (values: unknown[]): Query => ({
  name: 'test_insert',
  text: 'INSERT INTO t (k, v, n) VALUES ($1, $2, $3)',
  values,
});

const pid = async () =>
  (await pool.query<{ pid: number }>({ name: 'pid', text: 'SELECT pg_backend_pid() AS pid', values: [] }))
    .rows[0]!.pid;

const rows = async () =>
  (
    await pool.query<{ k: string; v: string | null; n: string | null }>({
      name: 'rows',
      text: 'SELECT k, v, n::text AS n FROM t ORDER BY k',
      values: [],
    })
  ).rows;

whenPostgres(() => {
  describe('write statement', () => {
    it('writes every value byte for byte and resolves with the row count', async () => {
      const texts = ['plain', 'quote \' and "double" and \\ backslash', 'ünïcödé ✓ 𝄞 emoji 🧶', '', ' '];
      for (const [i, text] of texts.entries()) {
        expect(await write(insert([`k${i}`, text, i === 0 ? Number.MAX_SAFE_INTEGER : -i]))).toBe(1);
      }
      expect(await write(insert(['k9', null, undefined]))).toBe(1);
      expect(await rows()).toEqual([
        ...texts.map((text, i) => ({
          k: `k${i}`,
          v: text,
          n: String(i === 0 ? Number.MAX_SAFE_INTEGER : -i),
        })),
        { k: 'k9', v: null, n: null },
      ]);
      const many = {
        name: 'test_insert_many',
        text: 'INSERT INTO t (k, v) SELECT $1 || g, $2 FROM generate_series(1, 3) g',
        values: ['m', 'x'],
      };
      expect(await write(many)).toBe(3);
    });

    it('a payload too long for the pooled buffers goes whole', async () => {
      const long = 'ß'.repeat(300_000); // 600 kB of UTF-8
      expect(await write(insert(['long', long, 1]))).toBe(1);
      const stored = await adminQuery<{ length: number }>(
        `SELECT octet_length(v) AS length FROM "${schema}".t WHERE k = 'long'`,
      );
      expect(stored).toEqual([{ length: 600_000 }]);
    });

    it('prepares its statement once per connection', async () => {
      const backend = await pid();
      for (let i = 0; i < 3; i++) await write(insert([`p${i}`, 'v', i]));
      const prepared = await pool.query<{ name: string; calls: string }>({
        name: 'prepared',
        text: 'SELECT name, generic_plans + custom_plans AS calls FROM pg_prepared_statements WHERE name = $1',
        values: ['test_insert'],
      });
      expect(prepared.rows).toEqual([{ name: 'test_insert', calls: '3' }]);
      expect(await pid()).toBe(backend);
    });

    it('a statement the server refuses rejects with its error and keeps the connection', async () => {
      const backend = await pid();
      await write(insert(['dup', 'a', 1]));
      const refused = await write(insert(['dup', 'b', 2])).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(pg.DatabaseError);
      expect((refused as pg.DatabaseError).code).toBe('23505');
      const bad = { name: 'test_bad', text: 'INSERT INTO no_such_table VALUES ($1)', values: ['x'] };
      expect(((await write(bad).catch((error: unknown) => error)) as pg.DatabaseError).code).toBe('42P01');
      // The failed Parse left nothing prepared: the same name parses again, and still fails alike.
      expect(((await write(bad).catch((error: unknown) => error)) as pg.DatabaseError).code).toBe('42P01');
      expect(await write(insert(['after', 'c', 3]))).toBe(1);
      expect(await pid()).toBe(backend);
      expect((await rows()).map((row) => row.v)).toEqual(['c', 'a']);
    });

    it('a value it cannot send is refused before anything is written, and the connection is kept', async () => {
      const backend = await pid();
      for (const value of [{ an: 'object' }, Number.NaN, 10n, true]) {
        const refused = await write(insert(['x', 'v', value])).catch((error: unknown) => error);
        expect(refused).toBeInstanceOf(TypeError);
      }
      expect(await rows()).toEqual([]);
      expect(await pid()).toBe(backend);
      expect(await write(insert(['ok', 'v', 1]))).toBe(1);
    });

    it('one name with another text on the same connection is refused, and nothing is sent', async () => {
      await write(insert(['a', 'v', 1]));
      const other = { name: 'test_insert', text: 'INSERT INTO t (k) VALUES ($1)', values: ['b'] };
      const refused = await write(other).catch((error: unknown) => error);
      expect(String(refused)).toMatch(/"test_insert" was parsed with another text/);
      expect((await rows()).map((row) => row.k)).toEqual(['a']);
    });

    it('a COPY from the client fails instead of waiting for data that never comes', async () => {
      const copy = { name: 'test_copy', text: 'COPY t (k) FROM STDIN', values: [] };
      const refused = await write(copy).catch((error: unknown) => error);
      expect(String(refused)).toMatch(/sends no COPY data/);
      expect(await write(insert(['after-copy', 'v', 1]))).toBe(1);
    });

    it('a backend killed mid-statement fails that write; the next one gets a new connection', async () => {
      const backend = await pid();
      const slow = {
        name: 'test_slow',
        text: 'INSERT INTO t (k) SELECT $1 FROM pg_sleep(5)',
        values: ['slow'],
      };
      const running = write(slow).catch((error: unknown) => error);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await adminQuery('SELECT pg_terminate_backend($1)', [backend]);
      const failed = await running;
      expect(failed).toBeInstanceOf(Error);
      expect(await write(insert(['next', 'v', 1]))).toBe(1);
      expect(await pid()).not.toBe(backend);
    });

    it('drain waits for a write in flight', async () => {
      const slow = {
        name: 'test_slow_ok',
        text: 'INSERT INTO t (k) SELECT $1 FROM pg_sleep(0.2)',
        values: ['slow'],
      };
      const order: string[] = [];
      const written = write(slow).then((count) => order.push(`written ${count}`));
      await pool.drain().then(() => order.push('drained'));
      await written;
      expect(order).toEqual(['written 1', 'drained']);
    });
  });
});

describe('write statement messages', () => {
  it('encode Parse only when asked, then Bind, Execute and Sync with exact lengths', () => {
    const withParse = Buffer.from(encodeMessages('SELECT $1', 's', ['é', null, 7]));
    const withoutParse = Buffer.from(encodeMessages(undefined, 's', ['é', null, 7]));
    const parse = withParse.subarray(0, withParse.length - withoutParse.length);
    expect(parse.toString('latin1', 0, 1)).toBe('P');
    expect(parse.readInt32BE(1)).toBe(parse.length - 1);
    expect(parse.subarray(5).toString('utf8')).toBe('s\0SELECT $1\0\0\0');
    // Bind: portal "", statement "s", no format codes, 3 parameters, then none for results.
    const bindLength = withoutParse.readInt32BE(1);
    const bind = withoutParse.subarray(0, 1 + bindLength);
    expect(bind.toString('latin1', 0, 1)).toBe('B');
    expect([...bind.subarray(5)]).toEqual([
      0, 0x73, 0, 0, 0, 0, 3, 0, 0, 0, 2, 0xc3, 0xa9, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1, 0x37, 0, 0,
    ]);
    expect([...withoutParse.subarray(bind.length)]).toEqual([
      0x45, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0x53, 0, 0, 0, 4,
    ]);
  });
});
