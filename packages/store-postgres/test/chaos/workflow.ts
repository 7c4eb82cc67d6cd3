/**
 * The chaos test's workflow and settings, shared by the test and its node processes: five
 * steps, each recording its effect as a row in `chaos_effects` (the side effect whose count the
 * test checks), then pausing so a SIGKILL often lands mid-step.
 */
import { defineWorkflow } from '@skein/workflow-runtime';
import { z } from 'zod';

/** The workflow's steps, in order. */
export const STEPS = ['s1', 's2', 's3', 's4', 's5'] as const;
/** How long each step runs after recording its effect. */
export const STEP_MS = 100;
/** Execution and leader lease TTL of every node: short, so a killed node's work is taken over fast. */
export const LEASE_TTL_MS = 1_000;
/** Supervisor tick interval of every node. */
export const TICK_MS = 100;
/** Executions each node runs at once. */
export const NODE_CONCURRENCY = 8;

/** The table the steps write; created by the test before any node starts. */
export const CREATE_EFFECTS_TABLE = `CREATE TABLE chaos_effects (
  execution_id text NOT NULL,
  step text NOT NULL,
  attempt integer NOT NULL,
  pid integer NOT NULL,
  at timestamptz NOT NULL DEFAULT now()
)`;
/** One effect. */
export const INSERT_EFFECT =
  'INSERT INTO chaos_effects (execution_id, step, attempt, pid) VALUES ($1, $2, $3, $4)';

/** Records one run of a step's side effect. */
export type RecordEffect = (executionId: string, step: string, attempt: number) => Promise<void>;

/** The five-step workflow, its effects recorded through `record`. */
export function chaosWorkflow(record: RecordEffect) {
  return defineWorkflow({
    name: 'chaos',
    input: z.object({ n: z.number().int() }),
    async run(ctx, { n }) {
      let total = n;
      for (const step of STEPS) {
        total += await ctx.step(step, async ({ executionId, attempt }) => {
          await record(executionId, step, attempt);
          await new Promise((resolve) => setTimeout(resolve, STEP_MS));
          return 1;
        });
      }
      return total;
    },
  });
}
