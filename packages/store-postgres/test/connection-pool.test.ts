/**
 * The stores' connection pool against the real server: it never opens more than its size,
 * serves waiting queries in order, keeps a connection the server only refused a statement on,
 * and drops one the server killed (idle or mid-statement), opening a new one for the next query.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionPool } from '../src/connection-pool.js';
import { adminQuery, PG_URL, whenPostgres } from './support/pg.js';

const pools: ConnectionPool[] = [];

afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.end()));
});

/** A pool whose connections carry a name of their own, so the test can find their backends. */
function pool(max: number, onError: (error: Error) => void = () => {}) {
  const name = `skein-pool-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const created = new ConnectionPool({ connectionString: PG_URL, application_name: name }, max, onError);
  pools.push(created);
  return { pool: created, name };
}

const backendPid = { name: 'backend_pid', text: 'SELECT pg_backend_pid() AS pid', values: [] };

async function pidOf(pool: ConnectionPool): Promise<number> {
  return (await pool.query<{ pid: number }>(backendPid)).rows[0]!.pid;
}

/** Connections the server has for `name`, once it shows `expected` (a closed backend takes a moment to go). */
async function connectionsNamed(name: string, expected: number): Promise<number> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const rows = await adminQuery<{ n: number }>(
      'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1',
      [name],
    );
    if (rows[0]!.n === expected || Date.now() > deadline) return rows[0]!.n;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function terminate(pid: number): Promise<void> {
  const rows = await adminQuery<{ ok: boolean }>('SELECT pg_terminate_backend($1) AS ok', [pid]);
  expect(rows).toEqual([{ ok: true }]);
}

whenPostgres(() => {
  describe('connection pool', () => {
    it('sequential queries reuse one connection; concurrent ones open at most `max`', async () => {
      const { pool: p, name } = pool(3);
      const first = await pidOf(p);
      expect(await pidOf(p)).toBe(first);
      const sleep = { name: 'sleep', text: 'SELECT pg_sleep(0.05)', values: [] };
      await Promise.all(Array.from({ length: 12 }, () => p.query(sleep)));
      expect(await connectionsNamed(name, 3)).toBe(3);
    });

    it('queries waiting for a connection are served in the order they came', async () => {
      const { pool: p } = pool(1);
      const order: number[] = [];
      const hold = { name: 'hold', text: 'SELECT pg_sleep(0.05)', values: [] };
      await Promise.all(
        [0, 1, 2, 3, 4].map(async (i) => {
          await p.query(hold);
          order.push(i);
        }),
      );
      expect(order).toEqual([0, 1, 2, 3, 4]);
    });

    it('a statement the server refuses fails alone and the connection stays', async () => {
      const { pool: p } = pool(2);
      const pid = await pidOf(p);
      const bad = { name: 'bad', text: 'SELECT 1 / 0', values: [] };
      await expect(p.query(bad)).rejects.toBeInstanceOf(pg.DatabaseError);
      expect(await pidOf(p)).toBe(pid);
    });

    it('an idle connection the server kills is dropped and reported; the next query opens a new one', async () => {
      const errors: Error[] = [];
      const { pool: p, name } = pool(2, (error) => errors.push(error));
      const pid = await pidOf(p);
      await terminate(pid);
      const deadline = Date.now() + 5000;
      while (errors.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(errors).toHaveLength(1);
      const next = await pidOf(p);
      expect(next).not.toBe(pid);
      expect(await connectionsNamed(name, 1)).toBe(1);
    });

    it('a connection killed mid-statement fails that statement only; the pool goes on', async () => {
      const { pool: p, name } = pool(1);
      const pid = await pidOf(p);
      const long = p.query({ name: 'long', text: 'SELECT pg_sleep(5)', values: [] }).then(
        () => 'finished',
        (error: unknown) => error,
      );
      // Wait until the statement runs on the server, then kill its backend.
      const deadline = Date.now() + 5000;
      for (;;) {
        const rows = await adminQuery<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1 AND query LIKE 'SELECT pg_sleep(5)%'",
          [pid],
        );
        if (rows[0]!.n === 1 || Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 10));
      }
      await terminate(pid);
      expect(await long).toMatchObject({ code: '57P01' }); // terminated by administrator
      expect(await pidOf(p)).not.toBe(pid);
      expect(await connectionsNamed(name, 1)).toBe(1);
    });

    it('a connection goes to its next user only when idle: pg never queues a statement behind another', async () => {
      // pg queues a query given to a client that is still answering one (and warns "client.query()
      // when the client is already executing a query"); every statement of the pool's must find
      // its client ready, whatever ran on it before: answers, refusals, writes, transactions.
      const { pool: p } = pool(2);
      const busyAtSend: string[] = [];
      const original = pg.Client.prototype.query as (...args: unknown[]) => unknown;
      pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]): unknown {
        const state = this as unknown as { readyForQuery: boolean; _queryQueue: unknown[] };
        // A user's own ROLLBACK after its refused statement follows that statement: its order, not the pool's.
        const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text: string }).text;
        if (text !== 'ROLLBACK' && (!state.readyForQuery || state._queryQueue.length > 0))
          busyAtSend.push(text);
        return original.apply(this, args);
      } as typeof pg.Client.prototype.query;
      try {
        const ok = { name: 'ok', text: 'SELECT 1 AS one', values: [] };
        const bad = { name: 'bad', text: 'SELECT 1 / 0', values: [] };
        const write = (query: typeof ok) => new Promise<void>((resolve) => p.write(query, () => resolve()));
        const transaction = async (fail: boolean) => {
          const client = await p.connect();
          let failed = true;
          try {
            await client.query('BEGIN');
            await client.query(fail ? bad : ok);
            await client.query('COMMIT');
            failed = false;
          } catch {
            failed = !(await client.query('ROLLBACK').then(
              () => true,
              () => false,
            ));
          } finally {
            p.release(client, failed);
          }
        };
        // A write refused before a byte is sent fails on pg's next tick, before the client is
        // ready again; a statement sent from its outcome must not get that client yet.
        const unsendable = { name: 'unsendable', text: 'SELECT $1::text', values: [{}] };
        await new Promise<void>((resolve) => {
          p.write(unsendable, () => {
            void p.query(ok).then(() => resolve());
          });
        });
        const calls = Array.from({ length: 120 }, (_, i) => {
          switch (i % 6) {
            case 0:
              return p.query(ok);
            case 1:
              return p.query(bad).catch(() => undefined);
            case 2:
              return write(ok);
            case 3:
              return write(bad);
            case 4:
              return transaction(false);
            default:
              return transaction(true);
          }
        });
        await Promise.all(calls);
      } finally {
        pg.Client.prototype.query = original as typeof pg.Client.prototype.query;
      }
      expect(busyAtSend).toEqual([]);
    });

    it('a connection given back as failed is closed, not reused', async () => {
      const { pool: p, name } = pool(2);
      const client = await p.connect();
      const pid = (await client.query<{ pid: number }>(backendPid)).rows[0]!.pid;
      p.release(client, true);
      expect(await pidOf(p)).not.toBe(pid);
      expect(await connectionsNamed(name, 1)).toBe(1);
    });

    it('after end() queries are refused and every connection is closed', async () => {
      const { pool: p, name } = pool(2);
      await pidOf(p);
      await p.end();
      await expect(p.query(backendPid)).rejects.toThrow('the connection pool has ended');
      expect(await connectionsNamed(name, 0)).toBe(0);
    });

    it('a server that cannot be reached fails the query, and the place it took is free again', async () => {
      const unreachable = new ConnectionPool(
        { connectionString: 'postgres://nobody@127.0.0.1:1/none', connectionTimeoutMillis: 2000 },
        1,
        () => {},
      );
      pools.push(unreachable);
      await expect(unreachable.query(backendPid)).rejects.toThrow();
      await expect(unreachable.query(backendPid)).rejects.toThrow();
    });
  });
});
