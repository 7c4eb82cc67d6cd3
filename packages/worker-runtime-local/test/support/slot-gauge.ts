/**
 * How many of a queue's executions run a step at once, and two workflows that suspend between
 * measured steps (a sleep, a signal wait): what the queue tests sample a limit with.
 */
import { defineWorkflow } from '@skein/workflow-runtime';
import { z } from 'zod';

/** Steps running right now and the most seen at once; `measured(ms)` is one such step. */
export function slotGauge() {
  const gauge = {
    now: 0,
    max: 0,
    reset(): void {
      gauge.now = 0;
      gauge.max = 0;
    },
    async measured(ms: number): Promise<void> {
      gauge.now += 1;
      gauge.max = Math.max(gauge.max, gauge.now);
      await new Promise((resolve) => setTimeout(resolve, ms));
      gauge.now -= 1;
    },
  };
  return gauge;
}

/** `napper` (a step, a sleep, a step) and `waiter` (a step, a wait for signal `go`, a step); each last step takes `afterMs`. */
export function suspendingWorkflows(measured: (ms: number) => Promise<void>, afterMs: number) {
  const napper = defineWorkflow({
    name: 'napper',
    input: z.object({ ms: z.number() }),
    async run(ctx, input) {
      await ctx.step('before', () => measured(5));
      await ctx.sleep('nap', input.ms);
      await ctx.step('after', () => measured(afterMs));
      return 'napper';
    },
  });
  const waiter = defineWorkflow({
    name: 'waiter',
    input: z.object({}),
    signals: { go: z.literal(true) },
    async run(ctx) {
      await ctx.step('before', () => measured(5));
      await ctx.waitForSignal('go', { schema: z.literal(true) });
      await ctx.step('after', () => measured(afterMs));
      return 'waiter';
    },
  });
  return { napper, waiter };
}
