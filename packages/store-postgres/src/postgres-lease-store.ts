/**
 * {@link LeaseStore} on PostgreSQL; every operation is one statement, atomic across processes.
 * A key or owner holding U+0000 is refused with `NulInTextError` by `claim` (it would be stored);
 * elsewhere it matches no lease.
 */
import type { LeaseStore } from '@skein/workflow-runtime';
import type { Lease } from '@skein/workflow-runtime/spi';
import type { Database, Query } from './database.js';
import { hasNul, refuseNul } from './nul-text.js';

/** Leases in PostgreSQL; time always comes from the caller, as in `MemoryLeaseStore`. */
export class PostgresLeaseStore implements LeaseStore {
  /** @param db the shared pool, with the schema migrated (see `openPostgresStores`). */
  constructor(private readonly db: Database) {}

  async claim(key: string, owner: string, ttlMs: number, now: number): Promise<Lease | null> {
    refuseNul('leases.claim', undefined, { 'the lease key': key, 'the lease owner': owner });
    return (
      (await this.db.query<Lease>('leases.claim', claimLease(key, owner, now + ttlMs, now))).rows[0] ?? null
    );
  }

  async renew(key: string, owner: string, ttlMs: number, now: number): Promise<Lease | null> {
    if (hasNul(key) || hasNul(owner)) return null;
    return (await this.db.query<Lease>('leases.renew', renewLease(key, owner, now + ttlMs))).rows[0] ?? null;
  }

  async release(key: string, owner: string): Promise<boolean> {
    if (hasNul(key) || hasNul(owner)) return false;
    return ((await this.db.query('leases.release', releaseLease(key, owner))).rowCount ?? 0) > 0;
  }

  async claimMany(keys: readonly string[], owner: string, ttlMs: number, now: number): Promise<string[]> {
    for (const key of keys)
      refuseNul('leases.claimMany', undefined, { 'the lease key': key, 'the lease owner': owner });
    if (keys.length === 0) return [];
    // Sorted and distinct: one row is touched once, and claims of overlapping keys lock in one order.
    const sorted = [...new Set(keys)].sort();
    const rows = await this.db.query<{ key: string }>(
      'leases.claimMany',
      claimLeases(sorted, owner, now + ttlMs, now),
    );
    return rows.rows.map((row) => row.key);
  }

  async releaseMany(keys: readonly string[], owner: string): Promise<string[]> {
    const ids = [...new Set(keys.filter((key) => !hasNul(key)))].sort();
    if (ids.length === 0 || hasNul(owner)) return [];
    const rows = await this.db.query<{ key: string }>('leases.releaseMany', releaseLeases(ids, owner));
    return rows.rows.map((row) => row.key);
  }

  async get(key: string): Promise<Lease | null> {
    if (hasNul(key)) return null;
    return (await this.db.query<Lease>('leases.get', selectLease(key))).rows[0] ?? null;
  }

  async listExpired(now: number, limit: number): Promise<Lease[]> {
    return (await this.db.query<Lease>('leases.listExpired', selectExpiredLeases(now, limit))).rows;
  }
}

const LEASE_COLUMNS = 'key, owner, expires_at AS "expiresAt"';

/** Take a lease that is free, expired or already ours. */
function claimLease(key: string, owner: string, expiresAt: number, now: number): Query {
  return {
    name: 'skein_claim_lease',
    text:
      'INSERT INTO skein_leases AS l (key, owner, expires_at) VALUES ($1, $2, $3) ON CONFLICT (key) DO UPDATE ' +
      'SET owner = excluded.owner, expires_at = excluded.expires_at ' +
      `WHERE l.owner = excluded.owner OR l.expires_at <= $4 RETURNING ${LEASE_COLUMNS}`,
    values: [key, owner, expiresAt, now],
  };
}

/** `claimLease` of every one of `keys` (sorted, distinct). */
function claimLeases(keys: readonly string[], owner: string, expiresAt: number, now: number): Query {
  return {
    name: 'skein_claim_leases',
    text:
      'INSERT INTO skein_leases AS l (key, owner, expires_at) ' +
      'SELECT k, $2, $3 FROM unnest($1::text[]) AS k ORDER BY k ON CONFLICT (key) DO UPDATE ' +
      'SET owner = excluded.owner, expires_at = excluded.expires_at ' +
      'WHERE l.owner = excluded.owner OR l.expires_at <= $4 RETURNING key',
    values: [keys, owner, expiresAt, now],
  };
}

/** Drop every one of `keys` we hold. */
function releaseLeases(keys: readonly string[], owner: string): Query {
  return {
    name: 'skein_release_leases',
    text: 'DELETE FROM skein_leases WHERE key = ANY($1::text[]) AND owner = $2 RETURNING key',
    values: [keys, owner],
  };
}

/** Extend a lease we still hold. */
function renewLease(key: string, owner: string, expiresAt: number): Query {
  return {
    name: 'skein_renew_lease',
    text: `UPDATE skein_leases SET expires_at = $3 WHERE key = $1 AND owner = $2 RETURNING ${LEASE_COLUMNS}`,
    values: [key, owner, expiresAt],
  };
}

/** Drop a lease we hold. */
function releaseLease(key: string, owner: string): Query {
  return {
    name: 'skein_release_lease',
    text: 'DELETE FROM skein_leases WHERE key = $1 AND owner = $2',
    values: [key, owner],
  };
}

/** One lease by key. */
function selectLease(key: string): Query {
  return {
    name: 'skein_select_lease',
    text: `SELECT ${LEASE_COLUMNS} FROM skein_leases WHERE key = $1`,
    values: [key],
  };
}

/** Leases expired at `now`, soonest expired first. */
function selectExpiredLeases(now: number, limit: number): Query {
  return {
    name: 'skein_select_expired_leases',
    text: `SELECT ${LEASE_COLUMNS} FROM skein_leases WHERE expires_at <= $1 ORDER BY expires_at, key LIMIT $2`,
    values: [now, limit],
  };
}
