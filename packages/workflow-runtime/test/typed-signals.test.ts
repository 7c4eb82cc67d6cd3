/**
 * Issue 24.3: signals typed from the schema. `defineWorkflow` is generic over its signal map:
 * `ctx.waitForSignal(name)` resolves with the declared payload's type (`| undefined` with a
 * timeout, as docs/signals.md says), and a name the workflow does not declare fails to compile.
 * The runtime's own checks stay for untyped callers.
 */
import {
  defineWorkflow,
  type MessagesOf,
  type SignalInput,
  type SignalName,
  type SignalPayload,
  type WorkflowContext,
} from '@skein/workflow-runtime';
import { describe, expect, expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import { backings, harness } from './support/stores.js';

const approval = defineWorkflow({
  name: 'typed-approval',
  input: z.object({ sku: z.string() }),
  signals: {
    approve: z.boolean(),
    note: z.object({ text: z.string(), at: z.coerce.date() }),
  },
  async run(ctx, { sku }) {
    const ok = await ctx.waitForSignal('approve', { timeoutMs: 60_000 });
    expectTypeOf(ok).toEqualTypeOf<boolean | undefined>();
    const note = await ctx.waitForSignal('note');
    expectTypeOf(note).toEqualTypeOf<{ text: string; at: Date }>();
    return ok === true ? `${sku}: ${note.text}` : 'rejected';
  },
});

describe('typed signals (types)', () => {
  test('the declared map is the type of the definition, its names and payloads', () => {
    type M = MessagesOf<typeof approval>;
    expectTypeOf<SignalName<M>>().toEqualTypeOf<'approve' | 'note'>();
    expectTypeOf<SignalPayload<M, 'note'>>().toEqualTypeOf<{ text: string; at: Date }>();
    // What a sender passes is the schema's input: z.coerce.date() takes anything.
    expectTypeOf<SignalInput<M, 'approve'>>().toEqualTypeOf<boolean>();
    expectTypeOf<SignalInput<M, 'note'>['text']>().toEqualTypeOf<string>();
  });

  test('waitForSignal: declared payload, | undefined under a timeout, a schema or type argument wins', () => {
    defineWorkflow({
      name: 'typed-waits',
      input: z.null(),
      signals: { approve: z.boolean(), count: z.number() },
      async run(ctx) {
        expectTypeOf(await ctx.waitForSignal('approve')).toEqualTypeOf<boolean>();
        expectTypeOf(await ctx.waitForSignal('count', { timeoutMs: 5 })).toEqualTypeOf<number | undefined>();
        const parsed = await ctx.waitForSignal('count', { schema: z.number().transform(String) });
        expectTypeOf(parsed).toEqualTypeOf<string>();
        expectTypeOf(await ctx.waitForSignal<number>('count')).toEqualTypeOf<number>();
        // @ts-expect-error: a typo'd signal name fails to compile
        await ctx.waitForSignal('aprove');
        // @ts-expect-error: so does a name the workflow does not declare, even with a schema
        await ctx.waitForSignal('other', { schema: z.string() });
        return null;
      },
    });
    expect(true).toBe(true);
  });

  test('a workflow that declares no signals: any name, payloads unknown (the runtime refuses them all)', () => {
    defineWorkflow({
      name: 'typed-undeclared',
      input: z.null(),
      async run(ctx) {
        expectTypeOf(ctx).toEqualTypeOf<WorkflowContext>();
        expectTypeOf(await ctx.waitForSignal('anything')).toEqualTypeOf<unknown>();
        expectTypeOf(await ctx.waitForSignal('x', { schema: z.string(), timeoutMs: 1 })).toEqualTypeOf<
          string | undefined
        >();
        return null;
      },
    });
    expect(true).toBe(true);
  });
});

describe.each(backings)('typed signals (%s store)', (_, open) => {
  const h = harness(open);

  test('the typed wait receives the declared payload, parsed by its schema', async () => {
    const { stores } = h.open();
    const runtime = h.runtime({ stores, workflows: [approval] });
    const handle = await runtime.start(approval, { sku: 'a' }, { executionId: 'typed-sig-1' });
    await runtime.signal('typed-sig-1', 'approve', true);
    await runtime.signal('typed-sig-1', 'note', { text: 'ship it', at: '2026-01-01T00:00:00Z' });
    await expect(handle.result()).resolves.toBe('a: ship it');
    const state = await runtime.loadState('typed-sig-1');
    expect(state?.calls[1]?.output).toEqual({ text: 'ship it', at: '2026-01-01T00:00:00Z' });
  });
});
