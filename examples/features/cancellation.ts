/** docs/cancellation.md: cancel a waiting execution; cleanup still runs. Run: npx tsx examples/features/cancellation.ts */
import { fileURLToPath } from 'node:url';
import {
  createRuntime,
  defineWorkflow,
  type ExecutionFailedError,
  openMemoryStores,
  type Stores,
} from '@skein/workflow-runtime';
import { z } from 'zod';

export const booking = defineWorkflow({
  name: 'booking',
  input: z.object({ room: z.string() }),
  async run(ctx, { room }) {
    const hold = await ctx.step('hold-room', () => `hold ${room}`);
    try {
      await ctx.sleep('wait-for-payment', 3_600_000); // CancelledError is thrown here
      return ctx.step('confirm', () => `confirmed ${hold}`);
    } finally {
      await ctx.step('release-hold', () => `released ${hold}`); // runs after a cancel too
    }
  },
});

export async function main(stores: Stores = openMemoryStores()): Promise<unknown> {
  const runtime = createRuntime({ stores, workflows: [booking] });
  await runtime.start(booking, { room: '12' }, { executionId: 'booking-1' });
  while ((await runtime.loadState('booking-1'))?.status !== 'suspended')
    await new Promise((r) => setTimeout(r, 5));
  const request = await runtime.cancel('booking-1', 'guest left'); // { cancelled: true, status: 'running' }
  const ended = await runtime.result('booking-1').catch((error: ExecutionFailedError) => error.status);
  const steps = (await runtime.loadState('booking-1'))?.steps.map((step) => step.name);
  await runtime.close();
  return { request, ended, steps }; // ended: 'cancelled'; steps: ['hold-room', 'release-hold']
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(await main());
