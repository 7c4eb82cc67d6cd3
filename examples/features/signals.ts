/** docs/signals.md: wait for an approval, with a timeout. Run: npx tsx examples/features/signals.ts */
import { fileURLToPath } from 'node:url';
import { createRuntime, defineWorkflow, openMemoryStores, type Stores } from '@skein/workflow-runtime';
import { z } from 'zod';

export const order = defineWorkflow({
  name: 'order',
  input: z.object({ sku: z.string() }),
  signals: { approve: z.boolean() }, // runtime.signal validates against this before writing
  async run(ctx, { sku }) {
    const hold = await ctx.step('reserve', () => `hold-${sku}`);
    const ok = await ctx.waitForSignal('approve', { schema: z.boolean(), timeoutMs: 86_400_000 });
    // ok is true, false, or undefined when a day passed without an answer
    return ok ? ctx.step('charge', () => `charged ${hold}`) : 'rejected';
  },
});

export async function main(stores: Stores = openMemoryStores()): Promise<unknown> {
  const runtime = createRuntime({ stores, workflows: [order] });
  const handle = await runtime.start(order, { sku: 'a' }, { executionId: 'order-42' });
  await runtime.signal('order-42', 'approve', true); // kept in the inbox if the wait is not reached yet
  const output = await handle.result(); // 'charged hold-a'
  await runtime.close();
  return output;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(await main());
