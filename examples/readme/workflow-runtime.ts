// examples/readme/workflow-runtime.ts: a workflow with a step and a durable sleep
import { createRuntime, defineWorkflow, openMemoryStores } from '@skein/workflow-runtime';
import { z } from 'zod';

const greet = defineWorkflow({
  name: 'greet',
  version: 1,
  input: z.object({ name: z.string() }),
  async run(ctx, { name }) {
    const text = await ctx.step('format', () => `hello ${name}`, { retry: { maxAttempts: 3 } });
    await ctx.sleep('pause', 10); // durable: a timer row, not a worker waiting
    return ctx.step('shout', () => text.toUpperCase());
  },
});

const stores = openMemoryStores(); // or openSqliteStores / openPostgresStores
const runtime = createRuntime({ stores, workflows: [greet] });
const handle = await runtime.start(greet, { name: 'ada' }, { executionId: 'greet-1' });
console.log(await handle.result()); // 'HELLO ADA'
console.log((await runtime.history('greet-1')).map((event) => event.type)); // the log, in seq order
await runtime.close();
await stores.close();
