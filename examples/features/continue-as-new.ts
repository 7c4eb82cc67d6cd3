/** docs/continue-as-new.md: a counter that loops forever on a bounded log. Run: npx tsx examples/features/continue-as-new.ts */
import { fileURLToPath } from 'node:url';
import { createRuntime, defineWorkflow, openMemoryStores, type Stores } from '@skein/workflow-runtime';
import { z } from 'zod';

export const tally = defineWorkflow({
  name: 'tally',
  input: z.object({ total: z.number().int(), until: z.number().int() }),
  signals: { add: z.number().int() },
  async run(ctx, { total, until }) {
    let sum = total;
    while (sum < until) {
      sum += await ctx.waitForSignal('add');
      // Past 20 events this log has done its part: go on in a successor with an empty one.
      if ((await ctx.historySize()).length > 20) await ctx.continueAsNew({ total: sum, until });
    }
    return sum;
  },
});

export async function main(stores: Stores = openMemoryStores()): Promise<unknown> {
  const runtime = createRuntime({ stores, workflows: [tally] });
  const handle = await runtime.start(tally, { total: 0, until: 30 }, { executionId: 'tally-1' });
  // Every signal goes to 'tally-1'; it reaches whichever run of the chain is current.
  for (let i = 0; i < 30; i++) await runtime.signal('tally-1', 'add', 1);
  const output = await handle.result(); // 30: result() follows the chain to its end
  const chain: string[] = [];
  for (let id: string | undefined = 'tally-1'; id !== undefined; ) {
    const state = await runtime.loadState(id);
    chain.push(`${id} ${state?.status}`);
    id = state?.continuedAs;
  }
  await runtime.close();
  return { output, chain };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(await main());
