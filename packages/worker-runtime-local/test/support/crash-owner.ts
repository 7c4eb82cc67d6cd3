/** Child process A: runs the workflow with leases on, until the parent kills it. */
import { openSqliteStores } from '@skein/store-sqlite';
import { createRuntime } from '@skein/workflow-runtime';
import { CRASH_LEASE_TTL_MS, shipOrder } from './crash-workflow.js';

const [dbPath, effectsFile, executionId] = process.argv.slice(2) as [string, string, string];
const stores = openSqliteStores({ path: dbPath });
const runtime = createRuntime({ stores, workflows: [shipOrder], lease: { ttlMs: CRASH_LEASE_TTL_MS } });
const handle = await runtime.start(shipOrder, { effectsFile }, { executionId });
console.log(`result ${await handle.result()}`);
await runtime.close();
await stores.close();
