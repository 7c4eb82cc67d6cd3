/**
 * docs/supervision.md#clients: a client never runs a body. Here the client's copy of the
 * definition throws from every step, and a runtime with its in-process maintenance does the
 * work; without wake-ups the client hands a signalled execution over through the log.
 */
import { createClient, defineWorkflow, InvalidInputError } from '@skein/workflow-runtime';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { backings, harness, types, until } from './support/stores.js';

function approval(effect: (step: string) => void) {
  return defineWorkflow({
    name: 'approval',
    input: z.object({ sku: z.string() }),
    signals: { approve: z.object({ by: z.string() }) },
    async run(ctx, { sku }) {
      await ctx.step('reserve', () => effect('reserve'));
      const approved = await ctx.waitForSignal<{ by: string }>('approve');
      await ctx.step('charge', () => effect('charge'));
      return `${sku} approved by ${approved.by}`;
    },
  });
}

describe.each(backings)('createClient (%s store)', (_, open) => {
  const h = harness(open);

  test('the client starts and signals; the worker runtime runs every step; the client none', async () => {
    const backing = h.open();
    const ran: string[] = [];
    const worker = h.runtime({
      stores: backing.stores,
      workflows: [approval((step) => ran.push(step))],
      lease: { ttlMs: 600 },
    });
    const client = createClient({
      stores: backing.reopen(),
      workflows: [
        approval((step) => {
          throw new Error(`the client ran step ${step}`);
        }),
      ],
    });
    const handle = await client.start(
      approval(() => undefined),
      { sku: 'a' },
      { executionId: 'c-1' },
    );
    await until(async () => (await client.loadState('c-1'))?.status === 'suspended');
    expect(await client.signal('c-1', 'approve', { by: 'ana' })).toMatchObject({
      accepted: true,
      woke: false,
    });
    expect(await handle.result()).toBe('a approved by ana');
    expect(ran).toEqual(['reserve', 'charge']);
    const log = types(await worker.history('c-1'));
    // The hand-over in the log, then the worker's takeover once the (absent) lease counted as lapsed.
    expect(log.slice(log.indexOf('EXECUTION_SUSPENDED') + 1, log.indexOf('EXECUTION_SUSPENDED') + 3)).toEqual(
      ['EXECUTION_RESUMED', 'EXECUTION_RECOVERED'],
    );
    expect(h.backgroundErrors).toEqual([]);
    await client.close();
  });

  test('the client sends an update; the worker runtime applies it and the client gets the result', async () => {
    const backing = h.open();
    const cart = (onAdd: () => void) =>
      defineWorkflow({
        name: 'cart',
        input: z.object({}),
        signals: { checkout: z.literal(true) },
        updates: { add: z.string() },
        async run(ctx) {
          const items: string[] = [];
          ctx.onUpdate('add', (item: string) => {
            onAdd();
            return items.push(item);
          });
          await ctx.waitForSignal('checkout');
          return items;
        },
      });
    h.runtime({ stores: backing.stores, workflows: [cart(() => undefined)], lease: { ttlMs: 600 } });
    const client = createClient({
      stores: backing.reopen(),
      workflows: [
        cart(() => {
          throw new Error('the client ran a handler');
        }),
      ],
    });
    const handle = await client.start(
      cart(() => undefined),
      {},
      { executionId: 'c-u' },
    );
    await until(async () => (await client.loadState('c-u'))?.status === 'suspended');
    expect(await client.update('c-u', 'add', 'fig', { timeoutMs: 10_000 })).toBe(1);
    await client.signal('c-u', 'checkout', true);
    expect(await handle.result()).toEqual(['fig']);
    expect(h.backgroundErrors).toEqual([]);
    await client.close();
  });

  test('L7: a bad signalHandOff is refused with the option named', () => {
    const { stores } = h.open();
    expect(() => createClient({ stores, signalHandOff: 'push' as 'log' })).toThrow(InvalidInputError);
    expect(() => createClient({ stores, signalHandOff: 'push' as 'log' })).toThrow(/signalHandOff/);
  });
});
