/**
 * PostgreSQL for the tests: the server at `SKEIN_PG_URL` (default: the local one), a fresh
 * schema per opened store that is dropped on close, and a loud skip when no server answers
 * (a failure under `CI=true`).
 */
import { openPostgresStores, type PostgresStores, type PostgresStoresOptions } from '@skein/store-postgres';
import type { OutboxMessage } from '@skein/workflow-runtime/spi';
import pg from 'pg';
import { afterEach, it } from 'vitest';

/** The server the tests use. */
export const PG_URL = process.env.SKEIN_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

async function probe(): Promise<unknown> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return error;
  } finally {
    await client.end().catch(() => undefined);
  }
}

const unreachable = await probe();
if (unreachable !== undefined) {
  const reason = unreachable instanceof Error ? unreachable.message : String(unreachable);
  if (process.env.CI === 'true') throw new Error(`PostgreSQL is not reachable at ${PG_URL}: ${reason}`);
  console.warn(`\n!!! PostgreSQL is NOT reachable at ${PG_URL} (${reason}): its tests are SKIPPED !!!\n`);
}

/** True when a server answered. */
export const pgReachable = unreachable === undefined;

/** Register `register`'s tests when a server answers, otherwise one skipped test that says why. */
export function whenPostgres(register: () => void): void {
  if (pgReachable) register();
  else it.skip(`PostgreSQL is not reachable at ${PG_URL}`, () => {});
}

let counter = 0;

/** A schema name no other test (in any process) uses. */
export function freshSchema(): string {
  counter += 1;
  return `skein_test_${process.pid}_${counter}_${Math.random().toString(36).slice(2, 8)}`;
}

/** Run one statement on a connection of the test's own (opened and closed around it). */
export async function adminQuery<Row extends pg.QueryResultRow>(
  text: string,
  values: unknown[] = [],
): Promise<Row[]> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return (await client.query<Row>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/**
 * For a block of tests of the outbox's statements: a function that opens fresh stores, writes
 * `messages` to their outbox (a thousand a call) and gives a connection on their schema. The
 * connection and the stores are closed after each test.
 */
export function outboxOnSchema(): (messages: readonly OutboxMessage[]) => Promise<pg.Client> {
  const open: { client?: pg.Client; stores?: PostgresStores } = {};
  afterEach(async () => {
    await open.client?.end();
    await open.stores?.close();
    open.client = undefined;
    open.stores = undefined;
  });
  return async (messages) => {
    open.stores = await openTestStores();
    for (let from = 0; from < messages.length; from += 1_000)
      await open.stores.outbox.write(messages.slice(from, from + 1_000));
    open.client = new pg.Client({
      connectionString: PG_URL,
      options: `-c search_path=${open.stores.schema}`,
    });
    await open.client.connect();
    return open.client;
  };
}

/** Drop `schema` and everything in it. */
export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/** Stores on a fresh schema; `close()` also drops the schema. */
export async function openTestStores(
  options: Omit<PostgresStoresOptions, 'url' | 'schema'> & { schema?: string } = {},
): Promise<PostgresStores> {
  const schema = options.schema ?? freshSchema();
  const stores = await openPostgresStores({ poolSize: 4, ...options, url: PG_URL, schema });
  const close = stores.close.bind(stores);
  return Object.assign(stores, {
    async close() {
      await close();
      await dropSchema(schema);
    },
  });
}
