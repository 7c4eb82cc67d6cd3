/** docs/inspection.md: list executions page by page. Run: npx tsx examples/features/inspection.ts */
import { fileURLToPath } from 'node:url';
import { createRuntime, defineWorkflow, openMemoryStores, type Stores } from '@skein/workflow-runtime';
import { z } from 'zod';

export const job = defineWorkflow({
  name: 'job',
  input: z.object({ n: z.number() }),
  async run(ctx, { n }) {
    if (n % 2 === 1) await ctx.sleep('later', 3_600_000); // odd jobs wait
    return n;
  },
});

export async function main(stores: Stores = openMemoryStores()): Promise<unknown> {
  const runtime = createRuntime({ stores, workflows: [job] });
  for (let n = 0; n < 5; n++) await runtime.start(job, { n }, { executionId: `job-${n}` });
  while ((await runtime.list({ status: ['running', 'pending'] })).items.length > 0)
    await new Promise((r) => setTimeout(r, 5));

  const waiting: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await runtime.list({ status: 'suspended', workflow: 'job', limit: 1, cursor });
    waiting.push(...page.items.map((item) => item.executionId));
    cursor = page.nextCursor; // absent on the last page
  } while (cursor !== undefined);
  const completed = (await runtime.list({ status: 'completed' })).items.length;
  const state = await runtime.loadState('job-1'); // full state of one execution
  const log = await runtime.history('job-1'); // its events, in seq order
  await runtime.close();
  return { waiting, completed, status: state?.status, events: log.map((event) => event.type) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(await main());
