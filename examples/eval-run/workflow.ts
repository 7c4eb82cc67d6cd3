/** The eval run: a scorer task and the workflow that fans every case of a dataset out to it. */
import { defineTask, defineWorkflow, type FanOutSummary } from '@skein/workflow-runtime';
import { z } from 'zod';

/** One case of the synthetic dataset: its text is stable by index. */
export function caseAt(index: number): { caseId: string; text: string } {
  const words = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'];
  return {
    caseId: `case-${index}`,
    text: Array.from({ length: 1 + (index % 7) }, (_, k) => words[(index + k) % 5]).join(' '),
  };
}

/** The scorer: a case scores its word count, out of 7. */
export const score = defineTask({
  name: 'score',
  version: 1,
  input: z.object({ caseId: z.string(), text: z.string() }),
  output: z.object({ score: z.number() }),
  retry: { maxAttempts: 3, initialMs: 200 },
  async run(input) {
    return { score: input.text.split(' ').length / 7 };
  },
});

/** The aggregate: how many cases, and their score's sum. */
export interface Totals {
  cases: number;
  sum: number;
}

/** The workflow: every case of the dataset fanned out to the scorer, the totals folded. */
export const evalRun = defineWorkflow({
  name: 'eval-run',
  version: 1,
  input: z.object({ size: z.number().int().positive() }),
  async run(ctx, input): Promise<FanOutSummary<Totals>> {
    return ctx.fanOut('cases', score, {
      items: (from, limit) =>
        Array.from({ length: Math.max(0, Math.min(limit, input.size - from)) }, (_, k) => caseAt(from + k)),
      chunkSize: 100,
      aggregate: {
        init: () => ({ cases: 0, sum: 0 }),
        add: (totals: Totals, result: { score: number }) => ({
          cases: totals.cases + 1,
          sum: totals.sum + result.score,
        }),
      },
    });
  },
});
