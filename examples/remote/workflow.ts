/** The demo workflow the worker process runs: price an order in two recorded steps. */
import { defineWorkflow } from '@skein/workflow-runtime';
import { z } from 'zod';

const PRICES: Record<string, number> = { apple: 120, pear: 95, plum: 60 };

export const quote = defineWorkflow({
  name: 'quote',
  input: z.object({ sku: z.string(), qty: z.number().int().positive() }),
  async run(ctx, { sku, qty }) {
    const net = await ctx.step('price', () => (PRICES[sku] ?? 100) * qty);
    const tax = await ctx.step('tax', () => Math.round(net * 0.2));
    return { sku, qty, totalCents: net + tax, pricedBy: process.pid };
  },
});
