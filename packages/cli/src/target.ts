/**
 * The store a command works on: `--db ./skein.db` (a SQLite file, which must exist: the CLI
 * never creates one) or `--pg URL [--schema S]` (a PostgreSQL schema, which must hold Skein's
 * tables: the CLI never creates one). Each is checked before the stores are opened, so a
 * wrong path, URL or schema ends with an error that names it and writes nothing.
 */
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { openPostgresStores } from '@skein/store-postgres';
import { openSqliteStores } from '@skein/store-sqlite';
import type { Stores } from '@skein/workflow-runtime';
import Database from 'better-sqlite3';
import pg from 'pg';
import { StoreUnavailableError, UsageError } from './errors.js';

/** The global flags that choose the store. */
export interface TargetOptions {
  db?: string;
  pg?: string;
  schema?: string;
}

/** An opened store and how to name it in messages. */
export interface Target {
  stores: Stores;
  /** `sqlite:/abs/path` or `postgres://host:port/db (schema s)`, without credentials. */
  label: string;
  close(): Promise<void>;
}

const CONNECT_TIMEOUT_MS = 5_000;

/** Check and open the store the flags name; see the module comment. */
export async function openTarget(options: TargetOptions): Promise<Target> {
  if (options.db !== undefined && options.pg !== undefined)
    throw new UsageError('pass either --db or --pg, not both');
  if (options.db !== undefined) {
    if (options.schema !== undefined) throw new UsageError('--schema goes with --pg, not --db');
    return openSqlite(options.db);
  }
  if (options.pg !== undefined) return openPostgres(options.pg, options.schema ?? 'skein');
  throw new UsageError('no store given: pass --db ./skein.db (a SQLite file) or --pg postgres://host/db');
}

async function openSqlite(path: string): Promise<Target> {
  const file = resolve(path);
  const label = `sqlite:${file}`;
  checkSqliteFile(file, label);
  const stores = openSqliteStores({ path: file });
  return { stores, label, close: () => stores.close() };
}

/** The file exists, is SQLite, and holds Skein's tables; read-only, so nothing is created. */
function checkSqliteFile(file: string, label: string): void {
  let isFile: boolean;
  try {
    isFile = statSync(file).isFile();
  } catch (error) {
    throw new StoreUnavailableError(
      label,
      'no such file (the CLI never creates one; pass the path your application opens with openSqliteStores)',
      { cause: error },
    );
  }
  if (!isFile) throw new StoreUnavailableError(label, 'is not a file');
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    const found = db
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'skein_migrations'")
      .get();
    if (found === undefined)
      throw new StoreUnavailableError(label, 'is a SQLite file without Skein tables (not a Skein database)');
  } catch (error) {
    if (error instanceof StoreUnavailableError) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new StoreUnavailableError(label, `cannot be read as a SQLite database: ${reason}`, {
      cause: error,
    });
  } finally {
    db?.close();
  }
}

async function openPostgres(url: string, schema: string): Promise<Target> {
  const where = describeUrl(url);
  const label = `${where} (schema ${schema})`;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    const reason = error instanceof Error ? error.message || error.name : String(error);
    throw new StoreUnavailableError(
      where,
      `cannot connect to PostgreSQL: ${reason} (check the host, port, user and database in --pg)`,
      { cause: error },
    );
  }
  try {
    const { rows } = await client.query<{ found: string | null }>('SELECT to_regclass($1)::text AS found', [
      `"${schema.replaceAll('"', '""')}".skein_migrations`,
    ]);
    if (rows[0]?.found == null)
      throw new StoreUnavailableError(
        label,
        `schema "${schema}" holds no Skein tables (check --schema; the default is skein)`,
      );
  } finally {
    await client.end();
  }
  try {
    const stores = await openPostgresStores({ url, schema, poolSize: 2 });
    return { stores, label, close: () => stores.close() };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new StoreUnavailableError(label, reason, { cause: error });
  }
}

/** `postgres://host:port/db` without user or password; the raw text when it is no URL. */
export function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const port = parsed.port === '' ? '5432' : parsed.port;
    return `postgres://${parsed.hostname}:${port}${parsed.pathname}`;
  } catch {
    throw new UsageError(`--pg ${JSON.stringify(url)} is not a URL (expected postgres://user@host:5432/db)`);
  }
}
