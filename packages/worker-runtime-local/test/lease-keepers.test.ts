/**
 * The runtime's side of execution leases (adr/0006, adr/0092), on a real SQLite file: a run
 * that ends before its first renewal tick leaves nothing behind, overlapping runs of one
 * execution release the row only when the last ends, and a run whose first append failed
 * claims nothing.
 */
import { ExecutionLeases, executionLeaseKey } from '@skein/workflow-runtime/internal';
import { describe, expect, it } from 'vitest';
import { harness, until, watchedLeases } from './support/sqlite.js';

const h = harness();

function leasesOn(ttlMs: number) {
  const db = h.db();
  const { stores, calls } = watchedLeases(db.stores);
  const errors: unknown[] = [];
  const leases = new ExecutionLeases({
    leases: stores.leases,
    events: stores.events,
    owner: 'node-a',
    ttlMs,
    clock: Date.now,
    onError: (error) => errors.push(error),
  });
  return { db, leases, calls, errors };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('execution lease keepers', () => {
  it('runs that end before their first renewal tick claim nothing and leave nothing held', async () => {
    const { leases, calls } = leasesOn(30_000);
    const ids = ['young-1', 'young-2', 'young-2', 'young-3'];
    const holds = ids.map((id) => leases.hold(id, 0, Promise.resolve()));
    expect(leases.holding).toBe(3);
    expect(leases.young).toBe(4);
    // Nothing was claimed, so nothing is in flight and there is nothing to wait for.
    expect(holds.map((held) => held.release())).toEqual([undefined, undefined, undefined, undefined]);
    expect(leases.holding).toBe(0);
    expect(leases.young).toBe(0);
    expect(calls.claim).toEqual([]);
    expect(calls.release).toEqual([]);
  });

  it('overlapping runs of one execution: the row is released only when the last one ends', async () => {
    const { db, leases, calls, errors } = leasesOn(150);
    const key = executionLeaseKey('shared-1');
    const first = leases.hold('shared-1', 0, Promise.resolve());
    const second = leases.hold('shared-1', 0, Promise.resolve());
    await until(async () => (await db.stores.leases.get(key)) !== null);
    expect(leases.young).toBe(0);
    await first.release();
    expect(await db.stores.leases.get(key)).not.toBeNull();
    expect(calls.release).toEqual([]);
    expect(leases.holding).toBe(1);
    await second.release();
    expect(await db.stores.leases.get(key)).toBeNull();
    expect(calls.release).toEqual([key]);
    expect(leases.holding).toBe(0);
    expect(errors).toEqual([]);
  });

  it('a run whose first append failed never claims, however long it is held', async () => {
    const { leases, calls } = leasesOn(60);
    const failed = Promise.reject(new Error('seq 0 refused'));
    failed.catch(() => undefined);
    const held = leases.hold('refused-1', 0, failed);
    await until(async () => leases.young === 0); // its first tick (20 ms) came
    await pause(100); // and some renewals after it
    await held.release();
    expect(calls.claim).toEqual([]);
    expect(calls.release).toEqual([]);
    expect(leases.holding).toBe(0);
  });
});
