/** Opening the one SQLite connection the stores share: WAL, durability, busy timeout. */
import Database from 'better-sqlite3';
import { InvalidSqliteOptionError } from './errors.js';

/** How hard a commit waits for the disk. */
export type Durability = 'full' | 'normal';

/** Options of {@link openConnection}. */
export interface ConnectionOptions {
  /** Path of the database file. */
  path: string;
  /** `full`: fsync on every commit; `normal`: a crash of the machine may lose the last commits (default: 'full'). */
  durability?: Durability;
  /** How long a statement waits for another process's write lock before failing, in ms (default: 5000). */
  busyTimeoutMs?: number;
}

/** Default wait for another process's lock. */
export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

/**
 * Open the file and set it up for several processes: the busy timeout first (so the switch
 * to WAL waits for a peer instead of failing), then WAL, then the durability level.
 */
export function openConnection(options: ConnectionOptions): Database.Database {
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  const durability = options.durability ?? 'full';
  if (durability !== 'full' && durability !== 'normal') {
    throw new InvalidSqliteOptionError('durability', `must be 'full' or 'normal', got ${String(durability)}`);
  }
  if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new InvalidSqliteOptionError(
      'busyTimeoutMs',
      `must be a non-negative integer, got ${busyTimeoutMs}`,
    );
  }
  const db = new Database(options.path, { timeout: busyTimeoutMs });
  try {
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    const mode = enableWal(db, busyTimeoutMs);
    if (mode !== 'wal' && options.path !== ':memory:') {
      throw new InvalidSqliteOptionError(
        'path',
        `${options.path} cannot use WAL (journal mode stays ${String(mode)})`,
      );
    }
    db.pragma(`synchronous = ${durability === 'full' ? 'FULL' : 'NORMAL'}`);
    db.pragma('foreign_keys = ON');
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * Switch to WAL, retrying while another process holds the file. The switch needs an exclusive
 * lock while holding a shared one, and SQLite refuses such an upgrade at once (SQLITE_BUSY,
 * no busy handler, to avoid deadlock), so processes opening a new file together would fail.
 */
function enableWal(db: Database.Database, busyTimeoutMs: number): unknown {
  const deadline = Date.now() + busyTimeoutMs;
  for (;;) {
    try {
      return db.pragma('journal_mode = WAL', { simple: true });
    } catch (error) {
      const busy = error instanceof Error && 'code' in error && String(error.code).startsWith('SQLITE_BUSY');
      if (!busy || Date.now() >= deadline) throw error;
      // Opening is synchronous anyway (better-sqlite3); block briefly, with jitter, and retry.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5 + Math.random() * 20);
    }
  }
}
