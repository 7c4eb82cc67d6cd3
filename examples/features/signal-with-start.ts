/** docs/signals.md: signalWithStart, and ctx.signal between executions. Run: npx tsx examples/features/signal-with-start.ts */
import { fileURLToPath } from 'node:url';
import { createRuntime, defineWorkflow, openMemoryStores, type Stores } from '@skein/workflow-runtime';
import { z } from 'zod';

export const cart = defineWorkflow({
  name: 'cart',
  input: z.object({ owner: z.string() }),
  signals: { add: z.string(), checkout: z.null() },
  async run(ctx, { owner }) {
    const items = [await ctx.waitForSignal('add')]; // the signal that started it comes first
    items.push(await ctx.waitForSignal('add'));
    await ctx.waitForSignal('checkout');
    return `${owner} buys ${items.join(', ')}`;
  },
});

export const cashier = defineWorkflow({
  name: 'cashier',
  input: z.object({ cartId: z.string() }),
  async run(ctx, { cartId }) {
    // Recorded like a step: sent once, even if this run crashes right after sending.
    await ctx.signal(cart, cartId, 'checkout', null);
    return 'checked out';
  },
});

export async function main(stores: Stores = openMemoryStores()): Promise<unknown> {
  const runtime = createRuntime({ stores, workflows: [cart, cashier] });
  const id = { executionId: 'cart-ada' };
  // The first call starts the cart with its signal in one append; the second only signals it.
  await runtime.signalWithStart(cart, { owner: 'ada' }, { name: 'add', payload: 'apple' }, id);
  await runtime.signalWithStart(cart, { owner: 'ada' }, { name: 'add', payload: 'pear' }, id);
  const checkout = await runtime.start(cashier, { cartId: 'cart-ada' });
  const output = { cart: await runtime.result('cart-ada'), cashier: await checkout.result() };
  await runtime.close();
  return output; // { cart: 'ada buys apple, pear', cashier: 'checked out' }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(await main());
