/**
 * Numbered migrations (`migrations/NNNN_name.sql`), read at runtime next to this module (the
 * build copies them to `dist/migrations`) and applied on open in one transaction that first
 * takes `pg_advisory_xact_lock` for the schema, so processes opening one database at once
 * never apply a migration twice and never race to create the schema.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type pg from 'pg';
import { MigrationError } from './errors.js';
import { quoteIdentifier } from './options.js';

/** One migration file. */
export interface Migration {
  id: number;
  name: string;
  sql: string;
}

const FILE_NAME = /^(\d{4})_([a-z0-9_]+)\.sql$/;

/** Migrations shipped with this package, in order; numbering must be dense from 1. */
export function loadMigrations(dir: URL = new URL('./migrations/', import.meta.url)): Migration[] {
  const migrations = readdirSync(dir)
    .filter((file) => file.endsWith('.sql'))
    .sort()
    .map((file) => {
      const match = FILE_NAME.exec(file);
      if (match === null) throw new MigrationError('-', `file ${file} is not named NNNN_name.sql`);
      return { id: Number(match[1]), name: match[2]!, sql: readFileSync(new URL(file, dir), 'utf8') };
    });
  migrations.forEach((migration, i) => {
    if (migration.id !== i + 1) {
      throw new MigrationError('-', `expected migration ${i + 1}, found ${migration.id}_${migration.name}`);
    }
  });
  return migrations;
}

/**
 * Apply every migration `schema` lacks, creating the schema if needed; returns the ids
 * applied by this call. `client` must have `search_path` set to `schema`.
 */
export async function migrate(
  client: pg.ClientBase,
  schema: string,
  migrations: readonly Migration[],
  now = Date.now(),
): Promise<number[]> {
  await client.query('BEGIN');
  try {
    const applied = await applyMissing(client, schema, migrations, now);
    await client.query('COMMIT');
    return applied;
  } catch (error) {
    await rollback(client, error);
    throw error;
  }
}

async function applyMissing(
  client: pg.ClientBase,
  schema: string,
  migrations: readonly Migration[],
  now: number,
): Promise<number[]> {
  await lockMigrations(client, schema);
  if (!(await schemaExists(client, schema))) await createSchema(client, schema);
  const done = new Set((await hasMigrationsTable(client, schema)) ? await appliedMigrationIds(client) : []);
  const newest = Math.max(0, ...done);
  if (newest > migrations.length) {
    throw new MigrationError(
      schema,
      `schema is at migration ${newest}; this library knows ${migrations.length}`,
    );
  }
  const applied: number[] = [];
  for (const migration of migrations) {
    if (done.has(migration.id)) continue;
    try {
      await client.query(migration.sql);
    } catch (error) {
      throw new MigrationError(schema, `${migration.id}_${migration.name}.sql failed`, { cause: error });
    }
    await recordMigration(client, migration, now);
    applied.push(migration.id);
  }
  return applied;
}

/** Roll back after `error`; a failing rollback is reported together with the error. */
async function rollback(client: pg.ClientBase, error: unknown): Promise<void> {
  try {
    await client.query('ROLLBACK');
  } catch (rollbackError) {
    throw new AggregateError([error, rollbackError], 'migration failed and so did its rollback');
  }
}

/** Serialize migrations of one schema across processes until this transaction ends. */
async function lockMigrations(client: pg.ClientBase, schema: string): Promise<void> {
  await client.query({
    name: 'skein_lock_migrations',
    text: "SELECT pg_advisory_xact_lock(hashtext('skein migrations ' || $1))",
    values: [schema],
  });
}

async function schemaExists(client: pg.ClientBase, schema: string): Promise<boolean> {
  const result = await client.query({
    name: 'skein_schema_exists',
    text: 'SELECT 1 FROM pg_namespace WHERE nspname = $1',
    values: [schema],
  });
  return result.rowCount === 1;
}

/** The one statement built from an identifier: the validated schema name, quoted once. */
async function createSchema(client: pg.ClientBase, schema: string): Promise<void> {
  await client.query(`CREATE SCHEMA ${quoteIdentifier(schema)}`);
}

/** True once 0001 has created the bookkeeping table. */
async function hasMigrationsTable(client: pg.ClientBase, schema: string): Promise<boolean> {
  const result = await client.query({
    name: 'skein_has_migrations_table',
    text: "SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = 'skein_migrations'",
    values: [schema],
  });
  return result.rowCount === 1;
}

/** Ids of the migrations already applied. */
async function appliedMigrationIds(client: pg.ClientBase): Promise<number[]> {
  const result = await client.query<{ id: number }>('SELECT id FROM skein_migrations ORDER BY id');
  return result.rows.map((row) => row.id);
}

/** Note that a migration was applied. */
async function recordMigration(client: pg.ClientBase, migration: Migration, now: number): Promise<void> {
  await client.query({
    name: 'skein_record_migration',
    text: 'INSERT INTO skein_migrations (id, name, applied_at) VALUES ($1, $2, $3)',
    values: [migration.id, migration.name, now],
  });
}
