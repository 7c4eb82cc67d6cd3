/**
 * Numbered migrations (`migrations/NNNN_name.sql`), read at runtime next to this module (the
 * build copies them to `dist/migrations`) and applied on open inside one BEGIN IMMEDIATE
 * transaction, so two processes opening one file at once never apply a migration twice.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { MigrationError } from './errors.js';

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
      if (match === null) throw new MigrationError(dir.pathname, `file ${file} is not named NNNN_name.sql`);
      return { id: Number(match[1]), name: match[2]!, sql: readFileSync(new URL(file, dir), 'utf8') };
    });
  migrations.forEach((migration, i) => {
    if (migration.id !== i + 1) {
      throw new MigrationError(
        dir.pathname,
        `expected migration ${i + 1}, found ${migration.id}_${migration.name}`,
      );
    }
  });
  return migrations;
}

/** Apply every migration the database lacks; returns the ids applied by this call. */
export function migrate(db: Database.Database, migrations: readonly Migration[], now = Date.now()): number[] {
  const applied: number[] = [];
  db.prepare('BEGIN IMMEDIATE').run();
  try {
    const done = new Set(hasMigrationsTable(db) ? appliedMigrationIds(db) : []);
    const newest = Math.max(0, ...done);
    if (newest > migrations.length) {
      throw new MigrationError(
        db.name,
        `schema is at migration ${newest}; this library knows ${migrations.length}`,
      );
    }
    for (const migration of migrations) {
      if (done.has(migration.id)) continue;
      applyMigration(db, migration);
      recordMigration(db, migration, now);
      applied.push(migration.id);
    }
    db.prepare('COMMIT').run();
    return applied;
  } catch (error) {
    if (db.inTransaction) db.prepare('ROLLBACK').run();
    throw error;
  }
}

function applyMigration(db: Database.Database, migration: Migration): void {
  try {
    db.exec(migration.sql);
  } catch (error) {
    throw new MigrationError(db.name, `${migration.id}_${migration.name}.sql failed`, { cause: error });
  }
}

/** True once 0001 has created the bookkeeping table. */
function hasMigrationsTable(db: Database.Database): boolean {
  return (
    db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'skein_migrations'").get() !==
    undefined
  );
}

/** Ids of the migrations already applied. */
function appliedMigrationIds(db: Database.Database): number[] {
  return db.prepare<[], number>('SELECT id FROM skein_migrations ORDER BY id').pluck().all();
}

/** Note that a migration was applied. */
function recordMigration(db: Database.Database, migration: Migration, now: number): void {
  db.prepare('INSERT INTO skein_migrations (id, name, applied_at) VALUES (?, ?, ?)').run(
    migration.id,
    migration.name,
    now,
  );
}
