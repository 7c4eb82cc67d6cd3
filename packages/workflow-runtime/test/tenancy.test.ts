/**
 * Tenancy the runtime enforces (adr/0024): stores scoped in part are refused, and a runtime on
 * unscoped stores (a supervisor's) never creates an execution inside a tenant, though it still
 * runs the tenants' executions and starts their children in their tenant.
 */
import {
  createRuntime,
  defineWorkflow,
  TenantScopedEventStore,
  TenantScopedSnapshotStore,
  TenantScopeError,
  tenantOf,
  tenantScopedStores,
} from '@skein/workflow-runtime';
import { TENANT_SCOPE } from '@skein/workflow-runtime/internal';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { backings, harness } from './support/stores.js';

const order = defineWorkflow({
  name: 'order',
  input: z.object({ card: z.string() }),
  async run(ctx, input) {
    const charged = await ctx.step('charge', () => `charged ${input.card}`);
    return charged;
  },
});
const child = defineWorkflow({ name: 'child', input: z.object({}), run: async () => 'child done' });
const parent = defineWorkflow({
  name: 'parent',
  input: z.object({ childId: z.string().optional() }),
  async run(ctx, { childId }) {
    try {
      return await ctx.child(child, {}, childId === undefined ? {} : { executionId: childId });
    } catch (error) {
      return `refused: ${(error as Error).message}`;
    }
  },
});
const workflows = [order, child, parent];

describe.each(backings)('tenancy on %s', (_name, openBacking) => {
  const h = harness(openBacking);

  it('a runtime refuses an event store scoped alone: snapshots keyed by the bare id would be shared', async () => {
    const { stores } = h.open();
    const events = new TenantScopedEventStore(stores.events, 'acme');
    // The arrangement TenantScopedEventStore's example used to show: tenant B's loadState
    // read A's snapshot (A's input), and B's run replaced A's state.
    const error = (() => {
      try {
        createRuntime({ stores: { ...stores, events }, workflows });
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(TenantScopeError);
    expect((error as Error).message).toContain(
      'events "acme", snapshots unscoped, timers unscoped, leases unscoped, signals unscoped',
    );
    expect((error as Error).message).toContain('tenantScopedStores(stores, "acme")');
  });

  it('a runtime refuses stores scoped to several tenants, or any one store scoped alone', async () => {
    const { stores } = h.open();
    const acme = tenantScopedStores(stores, 'acme');
    const globex = tenantScopedStores(stores, 'globex');
    expect(() => createRuntime({ stores: { ...acme, snapshots: globex.snapshots }, workflows })).toThrow(
      TenantScopeError,
    );
    const snapshots = new TenantScopedSnapshotStore(stores.snapshots, 'acme');
    expect(() => createRuntime({ stores: { ...stores, snapshots }, workflows })).toThrow(/snapshots "acme"/);
    expect(tenantOf(acme.events)).toBe('acme');
    expect(tenantOf(stores.events)).toBeUndefined();
    // A wrapper that carries the inner store's tenant is taken as scoped.
    const wrapped = {
      ...acme,
      events: Object.assign(Object.create(acme.events), { [TENANT_SCOPE]: 'acme' }),
    };
    expect(() => createRuntime({ stores: wrapped, workflows })).not.toThrow();
  });

  it("with every store scoped, tenant B neither reads A's state nor replaces it", async () => {
    const { stores } = h.open();
    const a = h.runtime({ stores: tenantScopedStores(stores, 'a'), workflows, snapshotEvery: 1 });
    const b = h.runtime({ stores: tenantScopedStores(stores, 'b'), workflows, snapshotEvery: 1 });
    await a.execute({ executionId: 'order-1', workflow: 'order', input: { card: 'A-4242' } });
    expect(await b.loadState('order-1')).toBeNull();
    await b.execute({ executionId: 'order-1', workflow: 'order', input: { card: 'B-1111' } });
    expect((await a.loadState('order-1'))?.output).toBe('charged A-4242');
    expect((await b.loadState('order-1'))?.output).toBe('charged B-1111');
  });

  it('an unscoped runtime refuses to create an execution inside a tenant (acme/…), by any start', async () => {
    const { stores } = h.open();
    const unscoped = h.runtime({ stores, workflows });
    const acme = h.runtime({ stores: tenantScopedStores(stores, 'acme'), workflows });
    const input = { card: 'x' };
    const refusals = await Promise.allSettled([
      unscoped.start(order, input, { executionId: 'acme/order-9' }),
      unscoped.enqueue(order, input, { executionId: 'acme/order-9' }),
      unscoped.execute({ executionId: 'acme/order-9', workflow: 'order', input }),
    ]);
    for (const refusal of refusals) {
      expect(refusal.status).toBe('rejected');
      const reason = (refusal as PromiseRejectedResult).reason as Error;
      expect(reason.name).toBe('InvalidInputError');
      expect(reason.message).toContain('belong to tenant "acme"');
    }
    expect((await acme.list()).items).toEqual([]);
    expect(await acme.loadState('order-9')).toBeNull();
    // An id without the separator is the unscoped runtime's own, as before.
    expect((await unscoped.execute({ executionId: 'order-9', workflow: 'order', input })).status).toBe(
      'completed',
    );
    expect((await acme.list()).items).toEqual([]);
  });

  it("an unscoped runtime still runs a tenant's executions, and starts their children in their tenant only", async () => {
    const { stores } = h.open();
    const acme = h.runtime({ stores: tenantScopedStores(stores, 'acme'), workflows });
    const unscoped = h.runtime({ stores, workflows });
    await acme.enqueue(order, { card: 'x' }, { executionId: 'job' });
    // A recovery of an existing tenant execution, with or without its input, is no creation.
    expect(
      (await unscoped.execute({ executionId: 'acme/job', workflow: 'order', input: { card: 'x' } })).status,
    ).toBe('completed');
    await acme.enqueue(parent, {}, { executionId: 'p' });
    await unscoped.execute({ executionId: 'acme/p', workflow: 'parent' });
    expect(await unscoped.result('acme/p')).toBe('child done');
    expect((await acme.list()).items.map((item) => item.executionId).sort()).toEqual([
      'job',
      'p',
      'p-child-0',
    ]);
    // A child that would leave its parent's tenant is refused in the child call.
    await acme.enqueue(parent, { childId: 'outside' }, { executionId: 'q' });
    await unscoped.execute({ executionId: 'acme/q', workflow: 'parent' });
    expect(await unscoped.result('acme/q')).toMatch(/refused: .*must be in the parent's tenant "acme"/);
    expect(await unscoped.loadState('outside')).toBeNull();
  });
});
