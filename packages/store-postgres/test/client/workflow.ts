/**
 * The client test's workflow, imported by both processes: every step appends
 * `<pid> <execution> <step>` to the effects file, so the test can tell which process ran it.
 */
import { appendFileSync } from 'node:fs';
import { defineWorkflow } from '@skein/workflow-runtime';
import { z } from 'zod';

/** Lease TTL of the worker: short, so a cancelled execution is taken over quickly. */
export const CLIENT_TEST_LEASE_TTL_MS = 1_500;

export const approval = defineWorkflow({
  name: 'approval',
  input: z.object({ effectsFile: z.string() }),
  signals: { approve: z.object({ by: z.string() }) },
  async run(ctx, { effectsFile }) {
    const effect = (step: string) =>
      appendFileSync(effectsFile, `${process.pid} ${ctx.executionId} ${step}\n`);
    await ctx.step('reserve', () => effect('reserve'));
    const approved = await ctx.waitForSignal<{ by: string }>('approve');
    await ctx.step('charge', () => effect('charge'));
    return `approved by ${approved.by}`;
  },
});
