import {
  defineWorkflow,
  ExecutionAlreadyExistsError,
  InvalidInputError,
  StaleFenceError,
  StorageWriteError,
  TenantScopedEventStore,
  tenantScopedStores,
} from '@skein/workflow-runtime';
import type { EventDraft } from '@skein/workflow-runtime/spi';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { backings, harness } from './support/stores.js';

const hello = defineWorkflow({
  name: 'hello',
  input: z.object({ who: z.string() }),
  async run(ctx, { who }) {
    return ctx.step('greet', () => `hello ${who}`);
  },
});

const draft = (type: EventDraft['type'] = 'EXECUTION_STARTED'): EventDraft => ({
  envelopeId: `e${Math.random()}`,
  type,
  payload: '{}',
  recordedAt: 0,
});

describe.each(backings)('TenantScopedEventStore over %s', (_name, open) => {
  const h = harness(open);

  it('tenants cannot read or write each other’s executions; listing shows only their own, unprefixed', async () => {
    const { stores } = h.open();
    const acme = new TenantScopedEventStore(stores.events, 'acme');
    const globex = new TenantScopedEventStore(stores.events, 'globex');
    // A runtime takes every store scoped (an event store scoped alone is refused: tenancy.test.ts).
    const acmeRuntime = h.runtime({ stores: tenantScopedStores(stores, 'acme'), workflows: [hello] });
    const globexRuntime = h.runtime({ stores: tenantScopedStores(stores, 'globex'), workflows: [hello] });
    await acmeRuntime.execute({ executionId: 'order-1', workflow: 'hello', input: { who: 'acme' } });
    await globexRuntime.execute({ executionId: 'order-1', workflow: 'hello', input: { who: 'globex' } });
    await globexRuntime.execute({ executionId: 'order-2', workflow: 'hello', input: { who: 'globex' } });

    expect((await acmeRuntime.loadState('order-1'))?.output).toBe('hello acme');
    expect((await globexRuntime.loadState('order-1'))?.output).toBe('hello globex');
    expect(await acme.getExecution('order-2')).toBeNull();
    expect(await acme.read('order-2')).toEqual([]);
    const acmeEvents = await acme.read('order-1');
    expect(acmeEvents.every((e) => e.executionId === 'order-1')).toBe(true);

    expect((await acme.listExecutions()).items.map((e) => e.executionId)).toEqual(['order-1']);
    const page1 = await globex.listExecutions({ limit: 1 });
    expect(page1.items.map((e) => e.executionId)).toEqual(['order-1']);
    const page2 = await globex.listExecutions({ limit: 1, cursor: page1.nextCursor });
    expect(page2.items.map((e) => e.executionId)).toEqual(['order-2']);
    // The underlying store holds them prefixed, apart.
    expect((await stores.events.listExecutions()).items.map((e) => e.executionId)).toEqual([
      'acme/order-1',
      'globex/order-1',
      'globex/order-2',
    ]);
  });

  it('an error it re-raises names the unscoped id, with the original as cause', async () => {
    const { stores } = h.open();
    const acme = new TenantScopedEventStore(stores.events, 'acme');
    await acme.append({ executionId: 'x', workflow: 'w', expectedSeq: 0, fence: 0, events: [draft()] });
    const exists = await acme
      .append({ executionId: 'x', workflow: 'w', expectedSeq: 0, fence: 0, events: [draft()] })
      .catch((e: unknown) => e);
    expect(exists).toBeInstanceOf(ExecutionAlreadyExistsError);
    expect((exists as ExecutionAlreadyExistsError).executionId).toBe('x');
    expect(((exists as Error).cause as ExecutionAlreadyExistsError).executionId).toBe('acme/x');

    await acme.acquireFence('x');
    const stale = await acme
      .append({ executionId: 'x', workflow: 'w', expectedSeq: 1, fence: 0, events: [draft('STEP_STARTED')] })
      .catch((e: unknown) => e);
    const refusal = stale instanceof StorageWriteError ? (stale.cause as Error) : (stale as Error);
    expect(refusal).toBeInstanceOf(StaleFenceError);
    expect((refusal as StaleFenceError).executionId).toBe('x');
    expect((refusal as StaleFenceError).message).not.toContain('acme/');
    expect(((refusal as Error).cause as StaleFenceError).executionId).toBe('acme/x');
    expect(await acme.read('x')).toHaveLength(1);
  });

  it('L7: a tenant name that could collide is refused', () => {
    const { stores } = h.open();
    expect(() => new TenantScopedEventStore(stores.events, '')).toThrow(InvalidInputError);
    expect(() => new TenantScopedEventStore(stores.events, 'a/b')).toThrow(/tenant/);
  });
});
