/** Child process: starts the demo execution and runs it until the parent kills it. */
import { openSqliteStores } from '@skein/store-sqlite';
import { createRuntime } from '@skein/workflow-runtime';
import { shipOrder } from './workflow.js';

const [dbPath, effectsFile, executionId] = process.argv.slice(2) as [string, string, string];
const stores = openSqliteStores({ path: dbPath });
const runtime = createRuntime({ stores, workflows: [shipOrder] });
const handle = await runtime.start(shipOrder, { orderId: '42', effectsFile }, { executionId });
console.log(`started ${handle.executionId}`);
console.log(`result ${JSON.stringify(await handle.result())}`);
await runtime.close();
stores.close();
