/** Child process B: runs only a Supervisor, until the execution is terminal. */
import { openSqliteStores } from '@skein/store-sqlite';
import { Supervisor } from '@skein/worker-runtime-local';
import { createRuntime, isTerminalStatus } from '@skein/workflow-runtime';
import { CRASH_LEASE_TTL_MS, shipOrder } from './crash-workflow.js';

const [dbPath, executionId] = process.argv.slice(2) as [string, string];
const stores = openSqliteStores({ path: dbPath });
const runtime = createRuntime({ stores, workflows: [shipOrder], lease: { ttlMs: CRASH_LEASE_TTL_MS } });
const supervisor = new Supervisor({ runtime, stores, leaseTtlMs: CRASH_LEASE_TTL_MS, tickIntervalMs: 50 });
supervisor.start();
for (;;) {
  const state = await runtime.loadState(executionId);
  if (state !== null && isTerminalStatus(state.status)) {
    console.log(`recovered ${state.status}`);
    break;
  }
  await new Promise((resolve) => setTimeout(resolve, 20));
}
await supervisor.stop();
await runtime.close();
await stores.close();
