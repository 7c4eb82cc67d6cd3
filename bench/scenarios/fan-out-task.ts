/** The trivial task of the fan-out bench: the score of case `i` is `i`. */
import { defineTask, defineWorkflow } from '@skein/workflow-runtime';
import { z } from 'zod';

export const trivial = defineTask({
  name: 'trivial',
  input: z.object({ i: z.number().int() }),
  async run(input) {
    return { score: input.i };
  },
});

/** The same work as one execution per item, for the baseline. */
export const perItem = defineWorkflow({
  name: 'per-item',
  input: z.object({ i: z.number().int() }),
  async run(ctx, input) {
    return ctx.step('score', () => ({ score: input.i }));
  },
});
