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

/**
 * The same work as one child workflow per item: a parent that starts `count` children of
 * {@link perItem} at once and awaits them all, as a workflow engine's users fan out.
 */
export const perItemParent = defineWorkflow({
  name: 'per-item-parent',
  input: z.object({ count: z.number().int().min(1) }),
  async run(ctx, { count }) {
    const scores = await Promise.all(Array.from({ length: count }, (_, i) => ctx.child(perItem, { i })));
    return scores.length;
  },
});
