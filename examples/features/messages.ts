/** docs/messages.md: progress as a published event, tokens as a durable stream. Run: npx tsx examples/features/messages.ts */
import { fileURLToPath } from 'node:url';
import { createRuntime, defineWorkflow, openMemoryStores, type Stores } from '@skein/workflow-runtime';
import { z } from 'zod';

export const summarize = defineWorkflow({
  name: 'summarize',
  input: z.object({ text: z.string() }),
  async run(ctx, { text }) {
    await ctx.setEvent('status', 'thinking'); // runtime.getEvent reads the latest value
    const words = await ctx.step('model', () => text.split(' ').map((word) => word.toUpperCase()));
    const tokens = ctx.stream('tokens');
    for (const word of words) await tokens.write(word); // recorded at offsets 0, 1, 2, …
    await ctx.setEvent('status', 'done');
    return words.length;
  },
});

export async function main(stores: Stores = openMemoryStores()): Promise<unknown> {
  const runtime = createRuntime({ stores, workflows: [summarize] });
  await runtime.start(summarize, { text: 'durable by default' }, { executionId: 'sum-1' });
  const seen: string[] = [];
  // Ends when the execution ends; after a disconnect, pass { from: lastOffset + 1 }.
  for await (const { offset, value } of runtime.readStream<string>('sum-1', 'tokens'))
    seen.push(`${offset}:${value}`);
  const status = await runtime.getEvent('sum-1', 'status'); // 'done'
  await runtime.close();
  return { seen, status };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(await main());
