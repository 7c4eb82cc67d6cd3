/** docs/versions.md: two versions side by side, and a patch. Run: npx tsx examples/features/versions.ts */
import { fileURLToPath } from 'node:url';
import {
  createRuntime,
  defineWorkflow,
  openMemoryStores,
  type Stores,
  type UnknownWorkflowError,
} from '@skein/workflow-runtime';
import { z } from 'zod';

export const greetV1 = defineWorkflow({
  name: 'greet',
  version: 1,
  input: z.object({ name: z.string() }),
  run: async (ctx, { name }) => ctx.step('format', () => `hello ${name}`),
});

export const greetV2 = defineWorkflow({
  name: 'greet',
  version: 2,
  input: z.object({ name: z.string() }),
  async run(ctx, { name }) {
    const text = await ctx.step('format', () => `hello ${name}`);
    // New code path; executions that already passed this point keep the old one.
    return ctx.patched('shout') ? text.toUpperCase() : text;
  },
});

export async function main(stores: Stores = openMemoryStores()): Promise<unknown> {
  const both = createRuntime({ stores, workflows: [greetV1, greetV2] });
  const v1 = await (await both.start(greetV1, { name: 'ada' }, { executionId: 'greet-v1' })).result();
  const v2 = await (await both.start(greetV2, { name: 'ada' }, { executionId: 'greet-v2' })).result();
  await both.enqueue(greetV1, { name: 'old' }, { executionId: 'greet-old' }); // pinned to v1, not run yet
  await both.close();

  const onlyV2 = createRuntime({ stores, workflows: [greetV2] }); // a node that no longer has v1
  const refused = await onlyV2
    .execute({ executionId: 'greet-old', workflow: 'greet' })
    .catch((error: UnknownWorkflowError) => error.message); // nothing written: still pending
  const pending = await onlyV2.list({ status: 'pending', versions: true });
  await onlyV2.close();
  return {
    v1,
    v2,
    refused,
    pending: pending.items.map(({ executionId, version, registered }) => ({
      executionId,
      version,
      registered,
    })),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(await main());
