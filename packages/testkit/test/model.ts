/**
 * A random-workflow model for the property tests: a list of named steps (some failing a few
 * attempts, retried with a small backoff) and durable sleeps. Each op prints as one short
 * phrase, so a shrunk counterexample reads like the workflow it stands for.
 */

import type { Effects } from '@skein/testkit';
import {
  type AnyWorkflow,
  defineWorkflow,
  StepFailedError,
  type WorkflowContext,
} from '@skein/workflow-runtime';
import fc from 'fast-check';
import { z } from 'zod';

/** A step that fails its first `failures` attempts, with `maxAttempts` in its retry policy. */
export interface StepOp {
  kind: 'step';
  failures: number;
  maxAttempts: number;
}

/** `ctx.sleep` for `ms` virtual milliseconds. */
export interface SleepOp {
  kind: 'sleep';
  ms: number;
}

export type Op = StepOp | SleepOp;

function describeOp(op: Op): string {
  return op.kind === 'sleep'
    ? `sleep ${op.ms}ms`
    : `step failing ${op.failures} of max ${op.maxAttempts} attempts`;
}

/** Attach the readable form fast-check prints, without touching the fields tests compare. */
function printable<T extends Op>(op: T): T {
  Object.defineProperty(op, fc.toStringMethod, { value: () => describeOp(op), enumerable: false });
  return op;
}

export const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc
    .record({
      kind: fc.constant('step' as const),
      failures: fc.integer({ min: 0, max: 2 }),
      maxAttempts: fc.integer({ min: 1, max: 3 }),
    })
    .map(printable),
  fc.record({ kind: fc.constant('sleep' as const), ms: fc.integer({ min: 0, max: 5_000 }) }).map(printable),
);

export const workflowArb = fc.array(opArb, { minLength: 1, maxLength: 5 });

/** What the workflow built from `ops` must return: the oracle, computed without running it. */
export function expectedOutput(ops: readonly Op[]): string[] {
  return ops.flatMap((op, i) => {
    if (op.kind === 'sleep') return [];
    return [op.failures < op.maxAttempts ? `s${i}:${op.failures + 1}` : `s${i}:gave-up`];
  });
}

async function runOp(ctx: WorkflowContext, effects: Effects, op: Op, i: number): Promise<string | undefined> {
  const name = `s${i}`;
  if (op.kind === 'sleep') {
    await ctx.sleep(name, op.ms);
    return undefined;
  }
  const attempt = effects.track(name, (info) => {
    if (info.attempt <= op.failures) throw new Error(`${name}: attempt ${info.attempt} fails`);
    return `${name}:${info.attempt}`;
  });
  try {
    return await ctx.step(name, attempt, { retry: { maxAttempts: op.maxAttempts, initialMs: 5 } });
  } catch (error) {
    if (error instanceof StepFailedError) return `${name}:gave-up`;
    throw error;
  }
}

/**
 * The workflow `ops` describes. `bug: 'count-bodies'` adds a deliberate defect: the output
 * also says how often the body ran, which no log records, so a crash changes it.
 */
export function buildWorkflow(ops: readonly Op[], bug?: 'count-bodies'): (effects: Effects) => AnyWorkflow {
  return (effects) => {
    let bodies = 0;
    return defineWorkflow({
      name: 'model',
      version: 1,
      input: z.null(),
      async run(ctx) {
        bodies += 1;
        const outputs: string[] = [];
        for (const [i, op] of ops.entries()) {
          const output = await runOp(ctx, effects, op, i);
          if (output !== undefined) outputs.push(output);
        }
        return bug === 'count-bodies' ? [...outputs, `bodies:${bodies}`] : outputs;
      },
    });
  };
}
