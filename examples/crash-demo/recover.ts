/** A fresh process: resumes the execution from its log. */
import { openSqliteStores } from '@skein/store-sqlite';
import { createRuntime } from '@skein/workflow-runtime';
import { shipOrder } from './workflow.js';

const [dbPath, effectsFile, executionId] = process.argv.slice(2) as [string, string, string];
const stores = openSqliteStores({ path: dbPath });
const runtime = createRuntime({ stores, workflows: [shipOrder] });
const state = await runtime.execute({
  executionId,
  workflow: 'ship-order',
  input: { orderId: '42', effectsFile },
});
console.log(`recovered ${executionId}: ${state.status} ${JSON.stringify(state.output)}`);
await runtime.close();
stores.close();
