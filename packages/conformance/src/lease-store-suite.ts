/** `leaseStoreSuite`: ownership with expiry, time always from the caller. */
import { describe, expect, it } from 'vitest';
import { type SuiteOptions, withStores } from './harness.js';

/** Options of {@link leaseStoreSuite}. */
export type LeaseStoreSuiteOptions = SuiteOptions<'leases'>;

/**
 * Register the lease-store conformance tests in the current vitest file.
 * @example
 * leaseStoreSuite({ name: 'memory', open: () => openMemoryStores() });
 */
export function leaseStoreSuite({ name, open }: LeaseStoreSuiteOptions): void {
  describe(`${name}: lease store`, () => {
    it('claim takes a free lease; another owner is refused until it expires; the owner may claim again', () =>
      withStores(open, async ({ leases }) => {
        expect(await leases.get('k')).toBeNull();
        expect(await leases.claim('k', 'a', 100, 1000)).toEqual({ key: 'k', owner: 'a', expiresAt: 1100 });
        expect(await leases.claim('k', 'b', 100, 1099)).toBeNull();
        expect(await leases.get('k')).toEqual({ key: 'k', owner: 'a', expiresAt: 1100 });
        expect(await leases.claim('k', 'a', 500, 1050)).toEqual({ key: 'k', owner: 'a', expiresAt: 1550 });
      }));

    it('renew extends our lease from the injected now', () =>
      withStores(open, async ({ leases }) => {
        await leases.claim('k', 'a', 100, 0);
        expect(await leases.renew('k', 'a', 100, 90)).toEqual({ key: 'k', owner: 'a', expiresAt: 190 });
        expect(await leases.claim('k', 'b', 100, 150)).toBeNull();
        expect(await leases.renew('missing', 'a', 100, 90)).toBeNull();
      }));

    it('an expired lease can be taken by another owner; the stale owner can then neither renew nor release', () =>
      withStores(open, async ({ leases }) => {
        await leases.claim('k', 'a', 100, 0);
        expect(await leases.claim('k', 'b', 100, 100)).toEqual({ key: 'k', owner: 'b', expiresAt: 200 });
        expect(await leases.renew('k', 'a', 100, 110)).toBeNull();
        expect(await leases.release('k', 'a')).toBe(false);
        expect(await leases.get('k')).toEqual({ key: 'k', owner: 'b', expiresAt: 200 });
        expect(await leases.release('k', 'b')).toBe(true);
        expect(await leases.get('k')).toBeNull();
        expect(await leases.release('k', 'b')).toBe(false);
      }));

    it('an owner may renew its lapsed lease while no one else took it', () =>
      withStores(open, async ({ leases }) => {
        await leases.claim('k', 'a', 100, 0);
        expect(await leases.renew('k', 'a', 100, 500)).toEqual({ key: 'k', owner: 'a', expiresAt: 600 });
      }));

    it('claimMany and releaseMany, where the store has them, do what claim and release do for each key', () =>
      withStores(open, async ({ leases }) => {
        if (leases.claimMany === undefined || leases.releaseMany === undefined) return;
        await leases.claim('held', 'b', 1000, 0);
        await leases.claim('lapsed', 'b', 100, 0);
        await leases.claim('mine', 'a', 100, 0);
        const claimed = await leases.claimMany(['free', 'held', 'lapsed', 'mine', 'free'], 'a', 500, 100);
        expect(claimed.sort()).toEqual(['free', 'lapsed', 'mine']);
        expect(await leases.get('free')).toEqual({ key: 'free', owner: 'a', expiresAt: 600 });
        expect(await leases.get('mine')).toEqual({ key: 'mine', owner: 'a', expiresAt: 600 });
        expect(await leases.get('held')).toEqual({ key: 'held', owner: 'b', expiresAt: 1000 });
        expect(await leases.claimMany([], 'a', 500, 100)).toEqual([]);
        const released = await leases.releaseMany(['free', 'held', 'mine', 'missing'], 'a');
        expect(released.sort()).toEqual(['free', 'mine']);
        expect(await leases.get('free')).toBeNull();
        expect(await leases.get('held')).toEqual({ key: 'held', owner: 'b', expiresAt: 1000 });
        expect(await leases.get('lapsed')).toEqual({ key: 'lapsed', owner: 'a', expiresAt: 600 });
        expect(await leases.releaseMany([], 'a')).toEqual([]);
      }));

    it('listExpired returns leases with expiresAt <= now, soonest first, at most limit', () =>
      withStores(open, async ({ leases }) => {
        await leases.claim('late', 'a', 300, 0);
        await leases.claim('early', 'a', 100, 0);
        await leases.claim('middle', 'b', 200, 0);
        await leases.claim('live', 'c', 1000, 0);
        expect((await leases.listExpired(99, 10)).map((lease) => lease.key)).toEqual([]);
        expect((await leases.listExpired(300, 10)).map((lease) => lease.key)).toEqual([
          'early',
          'middle',
          'late',
        ]);
        expect(await leases.listExpired(300, 2)).toEqual([
          { key: 'early', owner: 'a', expiresAt: 100 },
          { key: 'middle', owner: 'b', expiresAt: 200 },
        ]);
      }));
  });
}
