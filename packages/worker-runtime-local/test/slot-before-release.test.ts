/**
 * A run's slot comes free when its work ends, not when its lease is back (adr/0091): the next
 * claimed execution starts while the ended run's lease release is still under way, and the
 * ended execution's lease stays this node's until that release lands. Real SQLite file; the
 * lease store's release is held at a gate to make the window visible.
 */
import { Supervisor } from '@skein/worker-runtime-local';
import { defineWorkflow, type LeaseStore, type Stores } from '@skein/workflow-runtime';
import { executionLeaseKey } from '@skein/workflow-runtime/internal';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { deferred, harness, until } from './support/sqlite.js';

const h = harness();

const quick = defineWorkflow({
  name: 'quick',
  input: z.object({}),
  async run(ctx) {
    return ctx.step('only', () => 'done');
  },
});

/** `stores` whose lease releases wait for `open` (the real release runs after it). */
function gatedReleases(stores: Stores): { stores: Stores; open(): void; held: () => number } {
  const inner = stores.leases;
  const gate = deferred();
  let held = 0;
  const leases: LeaseStore = Object.create(inner);
  leases.release = async (key, owner) => {
    held += 1;
    await gate.promise;
    held -= 1;
    return inner.release(key, owner);
  };
  if (inner.releaseMany !== undefined) {
    const releaseMany = inner.releaseMany.bind(inner);
    leases.releaseMany = async (keys, owner) => {
      held += keys.length;
      await gate.promise;
      held -= keys.length;
      return releaseMany(keys, owner);
    };
  }
  return { stores: { ...stores, leases }, open: () => gate.resolve(), held: () => held };
}

describe('a slot frees before its lease is back', () => {
  it("at concurrency 1, the second execution runs while the first one's lease release is held; each lease is released once it lands", async () => {
    const db = h.db();
    const gated = gatedReleases(db.stores);
    const runtime = h.runtime({
      stores: gated.stores,
      workflows: [quick],
      maintenance: false,
      lease: { ttlMs: 30_000 },
    });
    await runtime.enqueue(quick, {}, { executionId: 'first' });
    await runtime.enqueue(quick, {}, { executionId: 'second' });
    const supervisor = new Supervisor({
      runtime,
      stores: gated.stores,
      leaseTtlMs: 30_000,
      tickIntervalMs: 1_000,
      concurrency: 1,
    });
    supervisor.start();
    try {
      // Both ran to the end with no release let through: the first's slot did not wait for it.
      await until(async () => (await runtime.loadState('second'))?.status === 'completed');
      expect((await runtime.loadState('first'))?.status).toBe('completed');
      expect(gated.held()).toBe(2);
      // Until their releases land, both leases are still this node's.
      for (const id of ['first', 'second'])
        expect((await db.stores.leases.get(executionLeaseKey(id)))?.owner).toBe(runtime.leaseOwner);
      gated.open();
      await supervisor.idle();
      for (const id of ['first', 'second'])
        expect(await db.stores.leases.get(executionLeaseKey(id))).toBeNull();
    } finally {
      gated.open();
      await supervisor.stop();
    }
  });
});
