/** docs/children.md: a parent talks to its child through the handle. Run: npx tsx examples/features/child-handles.ts */
import { fileURLToPath } from 'node:url';
import {
  type ChildFailedError,
  createRuntime,
  defineWorkflow,
  openMemoryStores,
  type Stores,
} from '@skein/workflow-runtime';
import { z } from 'zod';

export const review = defineWorkflow({
  name: 'review',
  input: z.object({ doc: z.string() }),
  signals: { assign: z.object({ reviewer: z.string() }) },
  async run(ctx, { doc }) {
    const { reviewer } = await ctx.waitForSignal('assign');
    return ctx.step('review', () => `${doc} approved by ${reviewer}`);
  },
});

export const publish = defineWorkflow({
  name: 'publish',
  input: z.object({ docs: z.array(z.string()) }),
  async run(ctx, { docs }) {
    const [first, second] = docs.map((doc) => ctx.child(review, { doc })); // two handles
    await first!.signal('assign', { reviewer: 'ana' }); // typed by review's declared signals
    await second!.cancel('one review is enough'); // the child's cleanup runs; it ends cancelled
    const verdict = await first!; // awaiting a handle gives the child's output, as before
    const other = await second!.result().catch((error: ChildFailedError) => error.status);
    return { verdict, other, secondId: second!.executionId };
  },
});

export async function main(stores: Stores = openMemoryStores()): Promise<unknown> {
  const runtime = createRuntime({ stores, workflows: [publish, review] });
  const handle = await runtime.start(publish, { docs: ['spec', 'faq'] }, { executionId: 'publish-1' });
  const output = await handle.result();
  await runtime.close();
  return output; // { verdict: 'spec approved by ana', other: 'cancelled', secondId: 'publish-1-child-1' }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(await main());
