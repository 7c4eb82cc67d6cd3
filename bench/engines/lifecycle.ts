/** Open an engine in a fresh temp directory (and a fresh PostgreSQL database when it needs one), then clean up. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Engine, EngineSpec } from './engine.js';
import { createDatabase, dropDatabase } from './pg-admin.js';

/** A database name for `spec`, unique to this process. */
export function databaseName(spec: EngineSpec): string {
  return `skein_bench_${spec.name.replace(/[^a-z0-9]+/g, '_')}_${process.pid}`.slice(0, 63);
}

/**
 * Give `fn` a fresh temp directory and, for a PostgreSQL engine, a fresh database named
 * {@link databaseName}; remove both afterwards, whatever happens.
 */
export async function withTarget<T>(
  spec: EngineSpec,
  fn: (target: { dir: string; pgUrl?: string; database?: string }) => Promise<T>,
): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'skein-bench-peers-'));
  const database = spec.store === 'postgres' ? databaseName(spec) : undefined;
  try {
    if (database === undefined) return await fn({ dir });
    await dropDatabase(database);
    const pgUrl = await createDatabase(database);
    return await fn({ dir, pgUrl, database });
  } finally {
    if (database !== undefined) await dropDatabase(database);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Open `spec` on `target`, run `fn`, and close the engine whatever happens. */
export async function withEngine<T>(
  spec: EngineSpec,
  target: { dir: string; pgUrl?: string },
  fn: (engine: Engine) => Promise<T>,
): Promise<T> {
  const engine = await spec.open(target);
  try {
    return await fn(engine);
  } finally {
    await engine.close();
  }
}
