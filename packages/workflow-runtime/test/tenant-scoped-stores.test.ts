import { defineWorkflow, TenantScopeError, tenantScopedStores } from '@skein/workflow-runtime';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { backings, harness } from './support/stores.js';

const counter = defineWorkflow({
  name: 'counter',
  input: z.object({ n: z.number() }),
  async run(ctx, { n }) {
    let total = n;
    for (let i = 0; i < 5; i++) total = await ctx.step(`add-${i}`, () => total + 1);
    await ctx.sleep('nap', 0);
    return total;
  },
});

describe.each(backings)('tenantScopedStores on %s', (_name, openBacking) => {
  const h = harness(openBacking);

  it('two tenants with the same execution id keep apart logs, snapshots, timers and leases', async () => {
    const { stores } = h.open();
    const acme = h.runtime({
      stores: tenantScopedStores(stores, 'acme'),
      workflows: [counter],
      snapshotEvery: 3,
    });
    const globex = h.runtime({
      stores: tenantScopedStores(stores, 'globex'),
      workflows: [counter],
      snapshotEvery: 3,
    });

    expect((await acme.execute({ executionId: 'same', workflow: 'counter', input: { n: 100 } })).output).toBe(
      105,
    );
    // A snapshot of acme's "same" exists now; globex must neither see nor fold it.
    expect(await stores.snapshots.latest('acme/same')).not.toBeNull();
    expect(await globex.loadState('same')).toBeNull();
    expect((await globex.execute({ executionId: 'same', workflow: 'counter', input: { n: 0 } })).output).toBe(
      5,
    );

    expect((await acme.loadState('same'))?.output).toBe(105);
    expect((await globex.loadState('same'))?.output).toBe(5);
    expect(await stores.timers.forExecution('acme/same')).toEqual([]);

    const leases = tenantScopedStores(stores, 'acme').leases;
    expect(await leases.claim('execution:same', 'node-a', 1000, 0)).toMatchObject({ key: 'execution:same' });
    expect(
      await tenantScopedStores(stores, 'globex').leases.claim('execution:same', 'node-b', 1000, 0),
    ).not.toBeNull();
    expect(await stores.leases.get('acme/execution:same')).toMatchObject({ owner: 'node-a' });
  });

  it('the signal inbox is per tenant: one signal id in two tenants is two signals, and each completes and clears only its own', async () => {
    const { stores } = h.open();
    const acme = tenantScopedStores(stores, 'acme').signals;
    const globex = tenantScopedStores(stores, 'globex').signals;
    const signal = { signalId: 's', executionId: 'same', name: 'approve', payload: 'true', sentAt: 1 };
    expect(await acme.send(signal)).toBe('sent');
    expect(await globex.send(signal)).toBe('sent');
    expect(await acme.pending('same', { names: ['approve'], limit: 5 })).toEqual([signal]);
    await globex.complete('same', 's');
    expect(await globex.pending('same')).toEqual([]);
    expect(await acme.pending('same')).toEqual([signal]);
    await globex.clear('same');
    expect(await stores.signals.pending('acme/same')).toEqual([{ ...signal, executionId: 'acme/same' }]);
    expect(await acme.send(signal, { maxPending: 1 })).toBe('duplicate');
    expect(await acme.send({ ...signal, signalId: 't' }, { maxPending: 1 })).toBe('inbox-full');
  });

  it('a tenant may not claim due timers across tenants: the error says where to run that', async () => {
    const { stores } = h.open();
    const scoped = tenantScopedStores(stores, 'acme');
    await expect(
      scoped.timers.claimDue({ now: 0, limit: 1, owner: 'x', claimTtlMs: 1 }),
    ).rejects.toBeInstanceOf(TenantScopeError);
  });
});

describe.each(backings)('tenant-scoped blockages on %s', (_name, openBacking) => {
  const h = harness(openBacking);

  it('adr/0058: two tenants blocked at the same id see their own blockage only; a runtime refuses unscoped blockages', async () => {
    const { stores } = h.open();
    const acme = tenantScopedStores(stores, 'acme');
    const globex = tenantScopedStores(stores, 'globex');
    const failure = { seq: 3, code: 'NON_DETERMINISM', message: 'diverged', at: 1_000 };
    await acme.blockages?.record({ executionId: 'same', ...failure });
    await globex.blockages?.record({ executionId: 'same', ...failure, message: 'globex diverged' });
    await globex.blockages?.record({ executionId: 'other', ...failure });
    expect(await acme.blockages?.get('same')).toMatchObject({ executionId: 'same', message: 'diverged' });
    expect(await acme.blockages?.get('other')).toBeNull();
    expect((await acme.blockages?.list({ limit: 10 }))?.map((row) => row.executionId)).toEqual(['same']);
    expect((await globex.blockages?.list({ limit: 10 }))?.map((row) => row.executionId)).toEqual([
      'other',
      'same',
    ]);
    expect((await stores.blockages?.get('globex/same'))?.message).toBe('globex diverged');
    expect(() =>
      h.runtime({ stores: { ...acme, blockages: stores.blockages }, workflows: [counter] }),
    ).toThrow(TenantScopeError);
  });
});
