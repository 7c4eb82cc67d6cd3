/** docs/children.md: a parent that runs a child workflow. Run: npx tsx examples/features/children.ts */
import { fileURLToPath } from 'node:url';
import { createRuntime, defineWorkflow, openMemoryStores, type Stores } from '@skein/workflow-runtime';
import { z } from 'zod';

export const invoice = defineWorkflow({
  name: 'invoice',
  input: z.object({ amount: z.number() }),
  async run(ctx, { amount }) {
    return ctx.step('issue', () => `invoice for ${amount}`);
  },
});

export const checkout = defineWorkflow({
  name: 'checkout',
  input: z.object({ amount: z.number() }),
  async run(ctx, { amount }) {
    // Started once (id "<parent>-child-0"); the parent suspends until the child ends.
    const issued = await ctx.child(invoice, { amount });
    return ctx.step('email', () => `sent: ${issued}`);
  },
});

export async function main(stores: Stores = openMemoryStores()): Promise<unknown> {
  const runtime = createRuntime({ stores, workflows: [checkout, invoice] });
  const handle = await runtime.start(checkout, { amount: 30 }, { executionId: 'checkout-1' });
  const output = await handle.result(); // 'sent: invoice for 30'
  const child = await runtime.loadState('checkout-1-child-0');
  await runtime.close();
  return { output, childParent: child?.parentId };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(await main());
