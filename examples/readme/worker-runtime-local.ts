// examples/readme/worker-runtime-local.ts: dispatch with deadlines and retries, in this process
import { openSqliteStores } from '@skein/store-sqlite';
import { ExecutionSupersededError } from '@skein/worker-runtime';
import { LocalDispatcher, LocalWorkerRuntime, SupervisingDispatcher } from '@skein/worker-runtime-local';
import { createRuntime, defineWorkflow } from '@skein/workflow-runtime';
import { z } from 'zod';

const order = defineWorkflow({
  name: 'order',
  input: z.object({ sku: z.string() }),
  run: async (ctx, { sku }) => ctx.step('reserve', () => `hold-${sku}`),
});

const stores = openSqliteStores({ path: './skein.db' });
const runtime = createRuntime({ stores, workflows: [order] });
const workers = new LocalWorkerRuntime({ runtime }); // a new fence for every attempt
const dispatcher = new LocalDispatcher({ workers, executeTimeoutMs: 30_000, maxAttempts: 3 });
const supervised = new SupervisingDispatcher({ target: dispatcher, maxRestarts: 2 });
try {
  const state = await supervised.dispatch({
    executionId: 'order-42',
    workflow: 'order',
    input: { sku: 'a' },
  });
  console.log(state.status, state.output); // 'completed' 'hold-a'
} catch (error) {
  if (!(error instanceof ExecutionSupersededError)) throw error;
  console.log(await runtime.result('order-42')); // another holder runs it: wait for its outcome
}
await runtime.close();
await stores.close();
