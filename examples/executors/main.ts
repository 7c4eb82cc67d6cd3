// examples/executors/main.ts: a hub over the central SQLite file and one executor that keeps its
// results in its own state directory. Run with `pnpm example:executors`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStores } from '@skein/store-sqlite';
import { createExecutor, ExecutorHub } from '@skein/worker-runtime-http';
import { LocalDispatcher } from '@skein/worker-runtime-local';
import { createRuntime, defineWorkflow } from '@skein/workflow-runtime';
import { z } from 'zod';

const render = defineWorkflow({
  name: 'render',
  input: z.object({ frame: z.number().int() }),
  run: async (ctx, { frame }) => ctx.step('draw', () => `frame-${frame}.png`),
});
const secret = process.env.SKEIN_SECRET ?? 'a shared secret of at least 32 bytes!';
const dir = mkdtempSync(join(tmpdir(), 'skein-executors-'));

// The central side: the hub is a WorkerRuntime over the central runtime.
const stores = openSqliteStores({ path: join(dir, 'central.db') });
const runtime = createRuntime({ stores, workflows: [render] });
const hub = new ExecutorHub({ runtime, secret });
const url = await hub.listen(0, '127.0.0.1');
const dispatcher = new LocalDispatcher({ workers: hub, executeTimeoutMs: 60_000 });

// The remote side (usually another machine): its own state directory, the same workflows.
const executor = createExecutor({
  id: 'exec-a',
  hub: url,
  secret,
  stateDir: join(dir, 'exec-a'),
  workflows: [render],
  packageVersion: '1.4.2',
});
const { quarantined, unreconciled } = await executor.start();
console.log({ quarantined, unreconciled }); // { quarantined: 0, unreconciled: 0 }

const state = await dispatcher.dispatch({ executionId: 'render-1', workflow: 'render', input: { frame: 1 } });
console.log(state.status, state.output); // completed frame-1.png
// ABSENT once the acknowledgement has released the row (FILTERED while it is on its way).
console.log(await hub.inspectRetainedRun('exec-a', 'render-1'));

await executor.stop();
await hub.close();
await runtime.close();
await stores.close();
rmSync(dir, { recursive: true, force: true });
