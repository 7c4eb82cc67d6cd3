// examples/readme/store-sqlite.ts: every store on one SQLite file
import { openSqliteStores } from '@skein/store-sqlite';
import { createRuntime, defineWorkflow } from '@skein/workflow-runtime';
import { z } from 'zod';

const order = defineWorkflow({
  name: 'order',
  input: z.object({ sku: z.string() }),
  run: async (ctx, { sku }) => ctx.step('reserve', () => `hold-${sku}`),
});

const stores = openSqliteStores({ path: './skein.db' }); // durability: 'full' (the default) or 'normal'
const runtime = createRuntime({ stores, workflows: [order] });
const handle = await runtime.start(order, { sku: 'a' }, { executionId: 'order-42' });
console.log(await handle.result()); // 'hold-a'; after a crash, runtime.execute continues from the log
await runtime.close();
await stores.close(); // commits queued appends, then closes the file
