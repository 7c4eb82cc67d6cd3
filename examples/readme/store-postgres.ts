// examples/readme/store-postgres.ts: several nodes on one PostgreSQL database
import { openPostgresStores } from '@skein/store-postgres';
import { Supervisor } from '@skein/worker-runtime-local';
import { createRuntime, defineWorkflow } from '@skein/workflow-runtime';
import { z } from 'zod';

const order = defineWorkflow({
  name: 'order',
  input: z.object({ sku: z.string() }),
  run: async (ctx, { sku }) => ctx.step('reserve', () => `hold-${sku}`),
});

// Connects, creates the schema if needed and migrates before it resolves.
const stores = await openPostgresStores({ url: 'postgres://postgres@127.0.0.1:5432/test', schema: 'skein' });
const runtime = createRuntime({ stores, workflows: [order], lease: { ttlMs: 10_000 } });
const supervisor = new Supervisor({ runtime, stores, leaseTtlMs: 10_000, wakeups: stores.wakeups });
supervisor.start(); // on every node: claims enqueued work; the leader fires timers and recovers

await runtime.enqueue(order, { sku: 'a' }, { executionId: 'order-43' }); // some node's supervisor runs it
console.log(await runtime.result('order-43')); // 'hold-a'
await supervisor.stop();
await runtime.close();
await stores.close();
