// examples/readme/worker-runtime-http.ts: a worker over signed HTTP, and a dispatcher that uses it
import { openSqliteStores } from '@skein/store-sqlite';
import { createHttpWorker, RemoteWorkerRuntime } from '@skein/worker-runtime-http';
import { LocalDispatcher } from '@skein/worker-runtime-local';
import { createRuntime, defineWorkflow } from '@skein/workflow-runtime';
import { z } from 'zod';

const order = defineWorkflow({
  name: 'order',
  input: z.object({ sku: z.string() }),
  run: async (ctx, { sku }) => ctx.step('reserve', () => `hold-${sku}`),
});
const secret = process.env.SKEIN_SECRET ?? 'a shared secret of at least 32 bytes!';

// The worker process: serves a runtime; its stores hand out the fences.
const stores = openSqliteStores({ path: './skein.db' });
const runtime = createRuntime({ stores, workflows: [order] });
const worker = createHttpWorker({ runtime, secret });
const url = await worker.listen(0, '127.0.0.1'); // an ephemeral port on loopback

// The dispatcher process: RemoteWorkerRuntime is a WorkerRuntime, so dispatchers use it unchanged.
const workers = new RemoteWorkerRuntime({ url, secret, timeoutMs: 30_000 });
const dispatcher = new LocalDispatcher({ workers, executeTimeoutMs: 30_000, maxAttempts: 3 });
const state = await dispatcher.dispatch({ executionId: 'order-42', workflow: 'order', input: { sku: 'a' } });
console.log(state.status, state.output); // 'completed' 'hold-a'

await worker.close();
await runtime.close();
await stores.close();
