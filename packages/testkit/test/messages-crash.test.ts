/**
 * Issue #23: L1–L7 and once-only steps hold under a crash at every write for a workflow that
 * takes updates (adr/0049), publishes events (adr/0050) and writes a durable stream (adr/0051).
 */
import { crashAtEveryWrite, type Effects } from '@skein/testkit';
import { defineWorkflow } from '@skein/workflow-runtime';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

function cart(effects: Effects) {
  return defineWorkflow({
    name: 'cart',
    version: 1,
    input: z.object({ owner: z.string() }),
    signals: { checkout: z.literal(true) },
    updates: { add: z.string(), remove: z.string() },
    async run(ctx, { owner }) {
      const items: string[] = [];
      ctx.onUpdate('add', (item: string) => {
        items.push(item);
        return items.length;
      });
      ctx.onUpdate('remove', (item: string) => {
        items.splice(items.indexOf(item), 1);
        return items.length;
      });
      await ctx.setEvent('status', 'open');
      const log = ctx.stream('log');
      await log.write(`opened by ${owner}`);
      await ctx.waitForSignal('checkout');
      await log.write(`checkout of ${items.length}`);
      const bill = await ctx.step(
        'bill',
        effects.track('bill', () => `${owner}: ${items.join(',')}`),
      );
      await ctx.setEvent('status', 'billed');
      return bill;
    },
  });
}

describe('crashAtEveryWrite with updates, published events and a stream', () => {
  it('every crash point recovers to the uncrashed output (the updates applied, the bill sent once)', async () => {
    const report = await crashAtEveryWrite(
      cart,
      { owner: 'ada' },
      {
        signals: { checkout: true },
        updates: { add: 'apple', remove: 'apple' },
      },
    );
    // The updates came while it waited for checkout: added, then removed again.
    expect(report.reference).toMatchObject({ status: 'completed', output: 'ada: ' });
    expect(report.outcomes.length).toBe(2 * report.writes);
    expect(report.outcomes.every((outcome) => outcome.status === 'completed')).toBe(true);
  });
});
