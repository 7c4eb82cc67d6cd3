// examples/readme/sandbox-wasm.ts: build an evaluator, load it pinned by hash, score a case in a workflow step
import { buildComponent, loadComponent, SandboxPool } from '@skein/sandbox-wasm';
import { createRuntime, defineWorkflow, openMemoryStores } from '@skein/workflow-runtime';
import { z } from 'zod';

// Once, at build time: evaluator.js exports `evaluate(input: string): string` and may call `log`.
const built = await buildComponent({ source: './evaluator.js', out: './evaluator.wasm' });

// At run time: pin the hashes the build printed; other bytes or imports are refused at load.
const evaluator = await loadComponent({ path: './evaluator.wasm', sha256: built.sha256 });
const pool = new SandboxPool({ size: 2 });
const limits = {
  memoryBytes: 16 << 20,
  fuel: 50_000_000,
  timeoutMs: 2_000,
  maxLogs: 100,
  maxLogBytes: 16_384,
};

const score = defineWorkflow({
  name: 'score',
  input: z.object({ text: z.string() }),
  // A breach (SANDBOX_FUEL_EXHAUSTED, SANDBOX_TIMEOUT, …) fails the step at once, its code recorded.
  run: async (ctx, input) => ctx.step('score', () => pool.invoke(evaluator, JSON.stringify(input), limits)),
});

const stores = openMemoryStores();
const runtime = createRuntime({ stores, workflows: [score] });
const handle = await runtime.start(score, { text: 'a case to score' }, { executionId: 'score-1' });
console.log(await handle.result());

await runtime.close();
await pool.close();
