/**
 * Updates are typed like signals (adr/0048, adr/0078): `ctx.onUpdate` by the declared schema,
 * and the senders (`runtime.update(workflow, id, …)`, `client.update(workflow, id, …)`, a typed
 * handle's `update`) by the declared names and payload inputs; the runtime still checks an
 * untyped caller.
 */
import {
  createClient,
  InvalidInputError,
  type Runtime,
  UnknownUpdateError,
  type WorkflowHandle,
} from '@skein/workflow-runtime';
import { describe, expect, expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import { defineWorkflow } from '../src/index.js';
import { backings, harness, until } from './support/stores.js';

test('ctx.onUpdate: a declared name gives its handler the schema output; an undeclared name fails to compile', () => {
  const cart = defineWorkflow({
    name: 'typed-updates',
    input: z.null(),
    updates: { add: z.string(), remove: z.object({ index: z.number() }) },
    async run(ctx) {
      const items: string[] = [];
      ctx.onUpdate('add', (item) => {
        expectTypeOf(item).toEqualTypeOf<string>();
        items.push(item);
        return items.length;
      });
      ctx.onUpdate('remove', (payload) => {
        expectTypeOf(payload).toEqualTypeOf<{ index: number }>();
        return items.splice(payload.index, 1);
      });
      // @ts-expect-error 'clear' is not a declared update
      ctx.onUpdate('clear', () => 0);
      return null;
    },
  });
  expect(Object.keys(cart.updates ?? {})).toEqual(['add', 'remove']);
});

test('a workflow that declares no updates: any name, payloads unknown', () => {
  defineWorkflow({
    name: 'typed-updates-undeclared',
    input: z.null(),
    async run(ctx) {
      ctx.onUpdate('anything', (payload) => {
        expectTypeOf(payload).toEqualTypeOf<unknown>();
        return null;
      });
      return null;
    },
  });
  expect(true).toBe(true);
});

/** A cart whose `add` returns the count and `remove` the removed items; ends at `checkout`. */
const shop = defineWorkflow({
  name: 'typed-updates-shop',
  input: z.object({ owner: z.string() }),
  signals: { checkout: z.null() },
  updates: { add: z.string().min(1), remove: z.object({ index: z.number().int() }) },
  async run(ctx, { owner }) {
    const items: string[] = [];
    ctx.onUpdate('add', (item) => items.push(item));
    ctx.onUpdate('remove', ({ index }) => items.splice(index, 1));
    await ctx.waitForSignal('checkout');
    return `${owner}: ${items.join(',')}`;
  },
});

describe('typed update senders (types)', () => {
  test('runtime.update(workflow, id, …), a typed handle and the client check names and payloads', () => {
    // biome-ignore lint/suspicious/noExplicitAny: what an untyped caller passes is `any`
    const check = async (runtime: Runtime, loose: any) => {
      expectTypeOf(runtime.update(shop, 'x', 'add', 'apple')).toEqualTypeOf<Promise<unknown>>();
      await runtime.update(shop, 'x', 'remove', { index: 0 }, { updateId: 'r1' });
      // @ts-expect-error: given the workflow, runtime.update checks the name
      await runtime.update(shop, 'x', 'ad', 'apple');
      // @ts-expect-error: and the payload
      await runtime.update(shop, 'x', 'remove', { at: 0 });
      // @ts-expect-error: a signal name is no update
      await runtime.update(shop, 'x', 'checkout', null);
      expectTypeOf(runtime.update<number>('x', 'anything', loose)).toEqualTypeOf<Promise<number>>();

      const handle = runtime.handle(shop, 'x');
      expectTypeOf(handle.update('add', 'apple')).toEqualTypeOf<Promise<unknown>>();
      // The handler's result type is the caller's to name (the definition declares none).
      expectTypeOf(handle.update<number>('add', 'apple')).toEqualTypeOf<Promise<number>>();
      // @ts-expect-error: with the result type given, the name is still checked
      await handle.update<number>('clear', 'apple');
      // @ts-expect-error: a typed handle checks the name
      await handle.update('clear', null);
      // @ts-expect-error: and the payload
      await handle.update('add', 42);
      const untyped = runtime.handle('x');
      await untyped.update('anything', { at: 'run time' });

      const client = createClient({ stores: runtime.stores, workflows: [shop] });
      await client.update(shop, 'x', 'add', 'pear');
      // @ts-expect-error: the client checks names as the runtime does
      await client.update(shop, 'x', 'nope', 'pear');
      // @ts-expect-error: and payloads
      await client.update(shop, 'x', 'remove', 'pear');
      // @ts-expect-error: and so do its typed handles
      await client.handle(shop, 'x').update('add', { item: 'pear' });
    };
    expect(typeof check).toBe('function');
  });
});

describe.each(backings)('typed update senders (%s store)', (_, open) => {
  const h = harness(open);

  test('the workflow-first runtime.update and a typed handle reach the handler and return its result', async () => {
    const { stores } = h.open();
    const runtime = h.runtime({ stores, workflows: [shop] });
    const started = await runtime.start(shop, { owner: 'ada' }, { executionId: 'typed-u-1' });
    await until(async () => (await started.state())?.status === 'suspended');
    expect(await runtime.update(shop, 'typed-u-1', 'add', 'apple', { updateId: 'u1' })).toBe(1);
    expect(await started.update('add', 'pear', { updateId: 'u2' })).toBe(2);
    expect(await runtime.handle(shop, 'typed-u-1').update('remove', { index: 0 })).toEqual(['apple']);
    // A repeated updateId returns the first result, through either path.
    expect(await started.update('add', 'apple', { updateId: 'u1' })).toBe(1);
    await started.signal('checkout', null);
    expect(await started.result()).toBe('ada: pear');
  });

  test('the runtime still refuses what an untyped caller gets wrong, through a handle too', async () => {
    const { stores } = h.open();
    const runtime = h.runtime({ stores, workflows: [shop] });
    await runtime.start(shop, { owner: 'bo' }, { executionId: 'typed-u-2' });
    const loose = runtime.handle(shop, 'typed-u-2') as WorkflowHandle<unknown>;
    await until(async () => (await loose.state())?.status === 'suspended');
    await expect(loose.update('clear', null)).rejects.toThrow(UnknownUpdateError);
    await expect(loose.update('add', '')).rejects.toThrow(InvalidInputError);
    await expect(runtime.update('typed-u-2', 'remove', { index: 'x' })).rejects.toThrow(InvalidInputError);
    const log = await runtime.history('typed-u-2');
    expect(log.some((event) => event.type.startsWith('UPDATE'))).toBe(false);
  });
});
