/**
 * `textBoundarySuite`: every string key that reaches a store is well-formed Unicode. A lone
 * surrogate has no UTF-8 form, so a database keeps U+FFFD in its place: on PostgreSQL two
 * distinct ids (or tenants) became one execution, on SQLite a listed id resolved to nothing.
 * So every boundary refuses one, with `InvalidInputError` naming the field, before anything is
 * written: ids at every runtime entry point, workflow, signal and context-call names, list
 * filters and cursors, tenant names, and appends on the store itself. Run against a runtime
 * over the implementation's stores.
 */
import {
  createRuntime,
  defineWorkflow,
  InvalidAppendError,
  type Runtime,
  type Stores,
  TenantScopedEventStore,
  tenantScopedStores,
} from '@skein/workflow-runtime';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { rejectionOf, withStores } from './harness.js';

/** Options of {@link textBoundarySuite}. */
export interface TextBoundarySuiteOptions {
  /** Names the implementation in test titles. */
  name: string;
  /** Returns fresh, empty stores; each test closes what it opened. */
  open: () => Stores | Promise<Stores>;
}

/** Strings that are not well-formed UTF-16, by what is wrong with them. */
const ILL_FORMED: [string, string][] = [
  ['a lone high surrogate', 'order-\uD800'],
  ['a lone low surrogate', 'order-\uDC00'],
  ['a reversed pair', 'order-\uDC00\uD800'],
];

const order = defineWorkflow({
  name: 'tb-order',
  input: z.object({ sku: z.string() }),
  signals: { approve: z.boolean(), '📦': z.string() },
  async run(ctx, input) {
    const approved = await ctx.waitForSignal('approve');
    return { sku: input.sku, approved };
  },
});
const child = defineWorkflow({ name: 'tb-child', input: z.object({}), run: async () => 'child' });
const calls = defineWorkflow({
  name: 'tb-calls',
  input: z.object({ bad: z.string() }),
  async run(ctx, { bad }) {
    const refused: string[] = [];
    const attempt = async (call: () => unknown) => {
      try {
        await call();
        refused.push('accepted');
      } catch (error) {
        refused.push(`${(error as Error).name}: ${(error as Error).message}`);
      }
    };
    await attempt(() => ctx.step(bad, () => 1));
    await attempt(() => ctx.sleep(bad, 0));
    await attempt(() => ctx.waitForSignal(bad, { schema: z.unknown(), timeoutMs: 0 }));
    await attempt(() => ctx.patched(bad));
    await attempt(() => ctx.child(child, {}, { executionId: bad }));
    // The calls above took no position: the one below is the first in the log.
    await ctx.step('after', () => 2);
    return refused;
  },
});
const workflows = [order, child, calls];

/** Register the text-boundary tests in the current vitest file. */
export function textBoundarySuite({ name, open }: TextBoundarySuiteOptions): void {
  const runtimeOver = async (body: (runtime: Runtime, stores: Stores) => Promise<void>) =>
    withStores(open, async (stores) => {
      const runtime = createRuntime({ stores, workflows, onError: () => undefined });
      try {
        await body(runtime, stores);
      } finally {
        await runtime.close();
      }
    });

  describe(`${name}: text boundaries (no lone surrogates)`, () => {
    it.each(ILL_FORMED)(
      'start, enqueue and execute refuse an execution id with %s and write nothing',
      (_what, id) =>
        runtimeOver(async (runtime, stores) => {
          const refusals = [
            await rejectionOf(runtime.start(order, { sku: 'a' }, { executionId: id })),
            await rejectionOf(runtime.enqueue(order, { sku: 'a' }, { executionId: id })),
            await rejectionOf(
              runtime.execute({ executionId: id, workflow: order.name, input: { sku: 'a' } }),
            ),
          ];
          for (const error of refusals) {
            expect(error.name).toBe('InvalidInputError');
            expect(error.message).toMatch(
              /executionId: must be well-formed Unicode, but has a lone surrogate/,
            );
          }
          expect((await runtime.list()).items).toEqual([]);
          expect((await stores.events.listExecutions()).items).toEqual([]);
        }),
    );

    it('every entry point that takes an execution id refuses one with a lone surrogate', () =>
      runtimeOver(async (runtime) => {
        const id = 'order-\uD800';
        const refusals = [
          await rejectionOf(runtime.loadState(id)),
          await rejectionOf(runtime.history(id)),
          await rejectionOf(runtime.result(id)),
          await rejectionOf(runtime.signal(id, 'approve', true)),
          await rejectionOf(runtime.cancel(id, 'no')),
          await rejectionOf(runtime.deadLetter(id, 'no')),
          await rejectionOf(runtime.resumeIfArrived(id)),
          await rejectionOf(runtime.wake(id)),
          await rejectionOf((async () => runtime.handle(id))()),
        ];
        for (const error of refusals) {
          expect(error.name).toBe('InvalidInputError');
          expect(error.message).toContain('lone surrogate (U+D800) at index 6');
        }
      }));

    it('workflow, signal and node names, list filters and cursors with a lone surrogate are refused where given', () =>
      runtimeOver(async (runtime, stores) => {
        expect(() => defineWorkflow({ ...order, name: 'w\uD800' })).toThrow(/lone surrogate/);
        expect(() => defineWorkflow({ ...child, signals: { 'go\uDC00': z.boolean() } })).toThrow(
          /lone surrogate/,
        );
        expect(() => createRuntime({ stores, workflows, nodeId: 'node-\uD800' })).toThrow(/nodeId/);
        const unknown = await rejectionOf(
          runtime.execute({ executionId: 'x', workflow: 'w\uD800', input: {} }),
        );
        expect(unknown.message).toMatch(/request\.workflow: must be well-formed/);
        await runtime.start(order, { sku: 'a' }, { executionId: 'signalled' });
        const signal = await rejectionOf(runtime.signal('signalled', 'approve\uD800', true));
        expect(signal.message).toMatch(/signal\.name: must be well-formed/);
        const signalId = await rejectionOf(
          runtime.signal('signalled', 'approve', true, { signalId: 's\uDC00' }),
        );
        expect(signalId.message).toMatch(/signal\.signalId: must be well-formed/);
        expect(await stores.signals.pending('signalled')).toEqual([]);
        for (const query of [{ workflow: 'tb-\uD800' }, { cursor: 'c\uD800' }]) {
          const list = await rejectionOf(runtime.list(query));
          expect(list.name).toBe('InvalidInputError');
          expect(list.message).toContain('lone surrogate');
        }
      }));

    it('a step, sleep, signal wait, patch or child id with a lone surrogate fails its call and takes no position', () =>
      runtimeOver(async (runtime) => {
        const state = await runtime.execute({
          executionId: 'calls',
          workflow: calls.name,
          input: { bad: 'x\uD800' },
        });
        expect(state.status).toBe('completed');
        const refused = state.output as string[];
        expect(refused).toHaveLength(5);
        for (const line of refused) expect(line).toMatch(/^(InvalidInputError|RangeError): .*lone surrogate/);
        const log = await runtime.history('calls');
        expect(log.map((event) => event.type)).toEqual([
          'EXECUTION_STARTED',
          'STEP_STARTED',
          'STEP_COMPLETED',
          'EXECUTION_COMPLETED',
        ]);
        expect(log[1]?.payload).toMatchObject({ name: 'after', position: 0 });
        expect(await runtime.loadState('calls-child-4')).toBeNull();
      }));

    it('a tenant name with a lone surrogate is refused (two such tenants could share executions)', () =>
      withStores(open, async (stores) => {
        for (const tenant of ['acme-\uD800', 'acme-\uDC00']) {
          expect(() => tenantScopedStores(stores, tenant)).toThrow(/tenant: must be well-formed/);
          expect(() => new TenantScopedEventStore(stores.events, tenant)).toThrow(/lone surrogate/);
        }
      }));

    it('the event store refuses an append whose execution id or workflow has a lone surrogate, writing nothing', () =>
      withStores(open, async ({ events }) => {
        const started = {
          envelopeId: 'tb-env-1',
          type: 'EXECUTION_STARTED' as const,
          payload: '{}',
          recordedAt: 1,
        };
        for (const [executionId, workflow] of [
          ['order-\uD800', 'wf'],
          ['order-ok', 'wf-\uDC00'],
        ] as const) {
          const error = await rejectionOf(
            events.append({ executionId, workflow, expectedSeq: 0, fence: 0, events: [started] }),
          );
          expect(error).toBeInstanceOf(InvalidAppendError);
          expect(error.message).toContain('lone surrogate');
        }
        expect((await events.listExecutions()).items).toEqual([]);
      }));

    it('control: ids and names with surrogate pairs round-trip; ids differing only in a pair stay distinct', () =>
      runtimeOver(async (runtime) => {
        const ids = ['order-😀', 'order-😁'];
        for (const [i, executionId] of ids.entries())
          await runtime.start(order, { sku: `sku-${i}` }, { executionId });
        const listed = (await runtime.list()).items.map((item) => item.executionId);
        expect(listed).toEqual(ids);
        for (const [i, executionId] of listed.entries())
          expect((await runtime.loadState(executionId))?.input).toEqual({ sku: `sku-${i}` });
        expect((await runtime.signal('order-😀', '📦', 'box')).accepted).toBe(true);
        await runtime.signal('order-😀', 'approve', true);
        expect(await runtime.result('order-😀')).toEqual({ sku: 'sku-0', approved: true });
        expect((await runtime.loadState('order-😁'))?.status).toBe('suspended');
      }));
  });
}
