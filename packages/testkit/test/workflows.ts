/** Workflows the testkit's own tests crash. */

import type { Effects } from '@skein/testkit';
import { type AnyWorkflow, defineWorkflow } from '@skein/workflow-runtime';
import { z } from 'zod';

/** Two steps around a sleep; the second fails once and is retried. */
export function order(effects: Effects): AnyWorkflow {
  return defineWorkflow({
    name: 'order',
    version: 1,
    input: z.object({ qty: z.number().int().positive() }),
    async run(ctx, input) {
      const hold = await ctx.step(
        'reserve',
        effects.track('reserve', () => `hold-${input.qty}`),
      );
      await ctx.sleep('cool-off', 60_000);
      const charged = await ctx.step(
        'charge',
        effects.track('charge', (info) => {
          if (info.attempt === 1) throw new Error('card network down');
          return input.qty * 10;
        }),
        { retry: { maxAttempts: 3, initialMs: 5 } },
      );
      return { hold, charged };
    },
  });
}
