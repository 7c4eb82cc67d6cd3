import { expect, expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import { defineWorkflow } from '../src/index.js';

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
