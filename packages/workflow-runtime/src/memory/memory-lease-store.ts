/** In-memory {@link LeaseStore}. */
import type { Lease, LeaseStore } from '../spi.js';

/** Leases held in memory; time always comes from the caller. */
export class MemoryLeaseStore implements LeaseStore {
  private readonly leases = new Map<string, Lease>();

  async claim(key: string, owner: string, ttlMs: number, now: number): Promise<Lease | null> {
    const lease = this.leases.get(key);
    if (lease !== undefined && lease.owner !== owner && lease.expiresAt > now) return null;
    const taken = { key, owner, expiresAt: now + ttlMs };
    this.leases.set(key, taken);
    return { ...taken };
  }

  async renew(key: string, owner: string, ttlMs: number, now: number): Promise<Lease | null> {
    const lease = this.leases.get(key);
    if (lease === undefined || lease.owner !== owner) return null;
    lease.expiresAt = now + ttlMs;
    return { ...lease };
  }

  async release(key: string, owner: string): Promise<boolean> {
    const lease = this.leases.get(key);
    if (lease === undefined || lease.owner !== owner) return false;
    this.leases.delete(key);
    return true;
  }

  async get(key: string): Promise<Lease | null> {
    const lease = this.leases.get(key);
    return lease === undefined ? null : { ...lease };
  }

  async listExpired(now: number, limit: number): Promise<Lease[]> {
    return [...this.leases.values()]
      .filter((lease) => lease.expiresAt <= now)
      .sort((a, b) => a.expiresAt - b.expiresAt)
      .slice(0, limit)
      .map((lease) => ({ ...lease }));
  }
}
