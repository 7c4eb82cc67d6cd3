/** The workflow of the sandbox's workflow tests: one step that scores a case in the sandbox. */
import type { SandboxComponent, SandboxPool } from '@skein/sandbox-wasm';
import { defineWorkflow } from '@skein/workflow-runtime';
import { z } from 'zod';

/** Fuel of the crash test's step: enough to run about a second, so the parent can kill it mid-step. */
export const CRASH_FUEL = 40_000_000;

/**
 * `score-case`: the step's limits come from the input; a breach fails the step at once despite
 * `maxAttempts: 3`. `onStep` runs as the step begins (the crash test's child prints a marker).
 */
export function scoreWorkflow(pool: SandboxPool, evaluator: SandboxComponent, onStep: () => void = () => {}) {
  return defineWorkflow({
    name: 'score-case',
    version: 1,
    input: z.object({ case: z.record(z.string(), z.unknown()), fuel: z.number().int().positive() }),
    async run(ctx, { case: fields, fuel }) {
      return ctx.step(
        'score',
        async () => {
          onStep();
          return pool.invoke(evaluator, JSON.stringify(fields), { fuel, timeoutMs: 120_000 });
        },
        { retry: { maxAttempts: 3, initialMs: 10 } },
      );
    },
  });
}
