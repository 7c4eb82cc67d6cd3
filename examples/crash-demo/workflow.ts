/** The demo's workflow: three steps, each of which records its effect in a file. */
import { appendFileSync } from 'node:fs';
import { defineWorkflow } from '@skein/workflow-runtime';
import { z } from 'zod';

/** Append one line per effect, so the demo can count how often each step really ran. */
function effect(file: string, step: string): void {
  appendFileSync(file, `${step} pid=${process.pid}\n`);
}

export const shipOrder = defineWorkflow({
  name: 'ship-order',
  version: 1,
  input: z.object({ orderId: z.string(), effectsFile: z.string() }),
  async run(ctx, input) {
    const charge = await ctx.step('charge-card', () => {
      effect(input.effectsFile, 'charge-card');
      return { chargeId: `ch_${input.orderId}`, amount: 4200 };
    });
    const label = await ctx.step('print-label', async () => {
      effect(input.effectsFile, 'print-label');
      // The demo kills the process while this step is in flight.
      console.log('in-step print-label');
      await new Promise((resolve) => setTimeout(resolve, 1500));
      return { tracking: `TRK-${input.orderId}` };
    });
    await ctx.step('notify-customer', () => {
      effect(input.effectsFile, 'notify-customer');
    });
    return { orderId: input.orderId, chargeId: charge.chargeId, tracking: label.tracking };
  },
});
