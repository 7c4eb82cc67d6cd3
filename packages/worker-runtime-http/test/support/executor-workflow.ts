/** The workflow of the executor process tests: one step that notes its run and waits for a gate file. */
import { appendFileSync, existsSync } from 'node:fs';
import { defineWorkflow } from '@skein/workflow-runtime';
import { z } from 'zod';

export const paint = defineWorkflow({
  name: 'paint',
  input: z.object({ frame: z.number().int(), effects: z.string(), gate: z.string().optional() }),
  run: async (ctx, { frame, effects, gate }) =>
    ctx.step('draw', async () => {
      appendFileSync(effects, `draw ${ctx.executionId}\n`);
      while (gate !== undefined && !existsSync(gate)) await new Promise((resolve) => setTimeout(resolve, 20));
      return `frame-${frame}`;
    }),
});
