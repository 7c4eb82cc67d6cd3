/** docs/messages.md: a cart that callers add to and get an answer from. Run: npx tsx examples/features/updates.ts */
import { fileURLToPath } from 'node:url';
import { createRuntime, defineWorkflow, openMemoryStores, type Stores } from '@skein/workflow-runtime';
import { z } from 'zod';

export const cart = defineWorkflow({
  name: 'cart',
  input: z.object({ owner: z.string() }),
  signals: { checkout: z.literal(true) },
  updates: { add: z.string().min(1) }, // runtime.update validates against this before writing
  async run(ctx, { owner }) {
    const items: string[] = [];
    // Runs where the body waits; what it returns is recorded and handed to the caller.
    ctx.onUpdate('add', (item: string) => {
      items.push(item);
      return items.length;
    });
    await ctx.waitForSignal('checkout');
    return ctx.step('bill', () => `${owner} pays for ${items.join(', ')}`);
  },
});

export async function main(stores: Stores = openMemoryStores()): Promise<unknown> {
  const runtime = createRuntime({ stores, workflows: [cart] });
  const handle = await runtime.start(cart, { owner: 'ada' }, { executionId: 'cart-1' });
  const first = await handle.update('add', 'apple', { updateId: 'req-1' }); // 1 (name and payload typed by cart)
  const again = await runtime.update(cart, 'cart-1', 'add', 'apple', { updateId: 'req-1' }); // 1: same id, same answer
  const second = await runtime.update('cart-1', 'add', 'pear'); // 2 (by id alone: checked at run time only)
  await runtime.signal('cart-1', 'checkout', true);
  const output = await handle.result(); // 'ada pays for apple, pear'
  await runtime.close();
  return { counts: [first, again, second], output };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(await main());
