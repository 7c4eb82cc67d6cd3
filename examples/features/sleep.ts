/** docs/sleep.md: a durable sleep that survives a restart. Run: npx tsx examples/features/sleep.ts */
import { fileURLToPath } from 'node:url';
import { createRuntime, defineWorkflow, openMemoryStores, type Stores } from '@skein/workflow-runtime';
import { z } from 'zod';

export const reminder = defineWorkflow({
  name: 'reminder',
  input: z.object({ to: z.string() }),
  async run(ctx, { to }) {
    await ctx.step('confirm', () => `confirmed for ${to}`);
    await ctx.sleep('one-day', 86_400_000); // suspends: no worker, only a timer row
    return ctx.step('remind', () => `reminded ${to}`);
  },
});

export async function main(stores: Stores = openMemoryStores()): Promise<unknown> {
  let now = Date.UTC(2026, 0, 1);
  const clock = () => now; // a virtual clock, so the example does not wait a day
  const first = createRuntime({ stores, workflows: [reminder], clock });
  await first.start(reminder, { to: 'ada' }, { executionId: 'reminder-1' });
  while ((await first.loadState('reminder-1'))?.status !== 'suspended')
    await new Promise((r) => setTimeout(r, 5));
  await first.close(); // the process goes away while the execution sleeps

  now += 86_400_000;
  const restarted = createRuntime({ stores, workflows: [reminder], clock });
  const state = await restarted.wake('reminder-1'); // a Supervisor tick does this in production
  await restarted.close();
  return state?.output; // 'reminded ada'
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(await main());
