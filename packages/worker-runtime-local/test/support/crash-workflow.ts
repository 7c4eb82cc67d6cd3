/** The crash test's workflow: three steps, each recording its effect in a file. */
import { appendFileSync } from 'node:fs';
import { defineWorkflow } from '@skein/workflow-runtime';
import { z } from 'zod';

/** Lease TTL of both processes: short, so the test is quick. */
export const CRASH_LEASE_TTL_MS = 400;

export const shipOrder = defineWorkflow({
  name: 'ship-order',
  input: z.object({ effectsFile: z.string() }),
  async run(ctx, { effectsFile }) {
    await ctx.step('charge-card', () => appendFileSync(effectsFile, 'charge-card\n'));
    await ctx.step('print-label', async () => {
      appendFileSync(effectsFile, 'print-label\n');
      console.log('in-step print-label');
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    });
    await ctx.step('notify-customer', () => appendFileSync(effectsFile, 'notify-customer\n'));
    return 'shipped';
  },
});
