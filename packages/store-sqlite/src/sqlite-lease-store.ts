/** {@link LeaseStore} on SQLite; every operation is one statement, so it is atomic across processes. */
import type { LeaseStore } from '@skein/workflow-runtime';
import type { Lease } from '@skein/workflow-runtime/spi';
import type Database from 'better-sqlite3';

type Db = Database.Database;

/** Leases in SQLite; time always comes from the caller, as in `MemoryLeaseStore`. */
export class SqliteLeaseStore implements LeaseStore {
  private readonly statements: {
    claim: ReturnType<typeof claimLease>;
    renew: ReturnType<typeof renewLease>;
    release: ReturnType<typeof releaseLease>;
    get: ReturnType<typeof selectLease>;
    expired: ReturnType<typeof selectExpiredLeases>;
  };

  /** @param db an open connection with the schema migrated (see `openSqliteStores`). */
  constructor(db: Db) {
    this.statements = {
      claim: claimLease(db),
      renew: renewLease(db),
      release: releaseLease(db),
      get: selectLease(db),
      expired: selectExpiredLeases(db),
    };
  }

  async claim(key: string, owner: string, ttlMs: number, now: number): Promise<Lease | null> {
    return this.statements.claim.get({ key, owner, expiresAt: now + ttlMs, now }) ?? null;
  }

  async renew(key: string, owner: string, ttlMs: number, now: number): Promise<Lease | null> {
    return this.statements.renew.get(now + ttlMs, key, owner) ?? null;
  }

  async release(key: string, owner: string): Promise<boolean> {
    return this.statements.release.run(key, owner).changes > 0;
  }

  async get(key: string): Promise<Lease | null> {
    return this.statements.get.get(key) ?? null;
  }

  async listExpired(now: number, limit: number): Promise<Lease[]> {
    return this.statements.expired.all(now, limit);
  }
}

const LEASE_COLUMNS = 'key, owner, expires_at AS expiresAt';

/** Take a lease that is free, expired or already ours. */
function claimLease(
  db: Db,
): Database.Statement<{ key: string; owner: string; expiresAt: number; now: number }, Lease> {
  return db.prepare(
    'INSERT INTO skein_leases (key, owner, expires_at) VALUES (@key, @owner, @expiresAt) ON CONFLICT (key) DO UPDATE ' +
      'SET owner = excluded.owner, expires_at = excluded.expires_at ' +
      `WHERE skein_leases.owner = excluded.owner OR skein_leases.expires_at <= @now RETURNING ${LEASE_COLUMNS}`,
  );
}

/** Extend a lease we still hold (expires at, key, owner). */
function renewLease(db: Db): Database.Statement<[number, string, string], Lease> {
  return db.prepare(
    `UPDATE skein_leases SET expires_at = ? WHERE key = ? AND owner = ? RETURNING ${LEASE_COLUMNS}`,
  );
}

/** Drop a lease we hold (key, owner). */
function releaseLease(db: Db): Database.Statement<[string, string]> {
  return db.prepare('DELETE FROM skein_leases WHERE key = ? AND owner = ?');
}

/** One lease by key. */
function selectLease(db: Db): Database.Statement<[string], Lease> {
  return db.prepare(`SELECT ${LEASE_COLUMNS} FROM skein_leases WHERE key = ?`);
}

/** Leases expired at `now`, soonest expired first (now, limit). */
function selectExpiredLeases(db: Db): Database.Statement<[number, number], Lease> {
  return db.prepare(
    `SELECT ${LEASE_COLUMNS} FROM skein_leases WHERE expires_at <= ? ORDER BY expires_at, key LIMIT ?`,
  );
}
