/** docs/cancellation.md#deadlines: an execution cancelled at its deadline. Run: npx tsx examples/features/deadlines.ts */
import { fileURLToPath } from 'node:url';
import {
  createRuntime,
  DeadlineExceededError,
  defineWorkflow,
  type ExecutionFailedError,
  openMemoryStores,
  type Stores,
} from '@skein/workflow-runtime';
import { z } from 'zod';

export const quote = defineWorkflow({
  name: 'quote',
  input: z.object({ customer: z.string() }),
  signals: { accept: z.null() },
  async run(ctx, { customer }) {
    const offer = await ctx.step('offer', () => `offer for ${customer}`);
    try {
      await ctx.waitForSignal('accept'); // DeadlineExceededError is thrown here at the deadline
      return ctx.step('book', () => `booked ${offer}`);
    } finally {
      await ctx.step('withdraw', () => `withdrawn ${offer}`); // cleanup runs, as for runtime.cancel
    }
  },
});

export async function main(stores: Stores = openMemoryStores()): Promise<unknown> {
  const runtime = createRuntime({ stores, workflows: [quote] });
  // Durable: the deadline is in seq 0 with a timer row of its own; any node fires it, after a restart too.
  const handle = await runtime.start(quote, { customer: 'ada' }, { executionId: 'quote-1', timeoutMs: 100 });
  const error = await handle.result().catch((failed: ExecutionFailedError) => failed);
  const cause = (error as ExecutionFailedError).cause;
  const steps = (await runtime.loadState('quote-1'))?.steps.map((step) => step.name);
  await runtime.close();
  // { status: 'cancelled', code: 'DEADLINE_EXCEEDED', steps: ['offer', 'withdraw'] }
  return {
    status: (error as ExecutionFailedError).status,
    code: cause instanceof DeadlineExceededError ? cause.code : cause,
    steps,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(await main());
