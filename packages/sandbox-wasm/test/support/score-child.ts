/** Child process of the crash test: starts `score-case` and runs it until the parent kills it. */
import { loadComponent, SandboxPool } from '@skein/sandbox-wasm';
import { openSqliteStores } from '@skein/store-sqlite';
import { createRuntime } from '@skein/workflow-runtime';
import { builtEvaluator } from './fixtures.js';
import { CRASH_FUEL, scoreWorkflow } from './score-workflow.js';

const [dbPath, executionId] = process.argv.slice(2) as [string, string];
const built = await builtEvaluator();
const evaluator = await loadComponent({ path: built.path, sha256: built.sha256 });
const pool = new SandboxPool({ size: 1 });
await pool.warm(evaluator);
const stores = openSqliteStores({ path: dbPath });
const workflow = scoreWorkflow(pool, evaluator, () => console.log('in-step score'));
const runtime = createRuntime({ stores, workflows: [workflow] });
const handle = await runtime.start(workflow, { case: { loop: true }, fuel: CRASH_FUEL }, { executionId });
await handle.result().catch(() => undefined);
console.log('finished');
await runtime.close();
await stores.close();
await pool.close();
