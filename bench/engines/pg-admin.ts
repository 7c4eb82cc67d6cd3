/**
 * Databases for the PostgreSQL engines: each engine gets a fresh database on the server at
 * SKEIN_PG_URL, dropped afterwards, so its `pg_stat_database` counters are its own.
 */
import pg from 'pg';
import { PG_URL } from '../scenarios/postgres-core.js';

/** The URL of database `name` on the bench's server. */
export function databaseUrl(name: string): string {
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Run `fn` on a connection of its own to the bench's server, closed afterwards. */
export async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const NAME = /^[a-z_][a-z0-9_]{0,62}$/;

function checked(name: string): string {
  if (!NAME.test(name)) throw new Error(`bench: bad database name ${name}`);
  return name;
}

/** Create an empty database `name`; returns its URL. */
export async function createDatabase(name: string): Promise<string> {
  await admin((client) => client.query(`CREATE DATABASE "${checked(name)}"`));
  return databaseUrl(name);
}

/** Wait (up to 5 s) until no backend is connected to database `name`. */
async function noBackends(client: pg.Client, name: string): Promise<void> {
  for (let tries = 0; tries < 200; tries++) {
    const open = await client.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [
      name,
    ]);
    if (open.rows[0].n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Drop database `name`. It first waits for the connections of closed pools to go (a pool's
 * `end()` resolves before its sockets close, and a forced drop would fail them mid-close),
 * then forces out whatever is left.
 */
export async function dropDatabase(name: string): Promise<void> {
  await admin(async (client) => {
    await noBackends(client, checked(name));
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  });
}

/** Cumulative server counters of one database (from `pg_stat_database`). */
export interface DatabaseCounters {
  commits: number;
  inserted: number;
  updated: number;
  deleted: number;
}

/**
 * The counters of database `name` once no backend is connected to it any more: a backend
 * flushes its statistics when it exits, so reading before that would miss recent commits.
 */
export async function databaseCounters(name: string): Promise<DatabaseCounters> {
  return admin(async (client) => {
    await noBackends(client, name);
    const { rows } = await client.query(
      `SELECT xact_commit::float8 AS commits, tup_inserted::float8 AS inserted,
              tup_updated::float8 AS updated, tup_deleted::float8 AS deleted
         FROM pg_stat_database WHERE datname = $1`,
      [name],
    );
    if (rows[0] === undefined) throw new Error(`bench: no pg_stat_database row for ${name}`);
    return rows[0] as DatabaseCounters;
  });
}
