/** Load on loopback: many concurrent dispatches to one worker all complete, and nothing is lost. */
import { LocalDispatcher } from '@skein/worker-runtime-local';
import { defineWorkflow } from '@skein/workflow-runtime';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { types, workers } from './support/worker.js';

const w = workers();
const DISPATCHES = 200;
const effects = new Map<string, number>();

const pair = defineWorkflow({
  name: 'pair',
  input: z.object({ n: z.number().int() }),
  async run(ctx, input) {
    const a = await ctx.step('a', ({ executionId }) => {
      effects.set(executionId, (effects.get(executionId) ?? 0) + 1);
      return input.n;
    });
    return ctx.step('b', () => a * 2);
  },
});

describe('HTTP worker under load', () => {
  it(`${DISPATCHES} concurrent dispatches to one worker over 127.0.0.1 all complete; every log is whole`, async () => {
    const served = await w.serve([pair]);
    const dispatcher = new LocalDispatcher({
      workers: served.client({ timeoutMs: 20_000 }),
      executeTimeoutMs: 20_000,
    });
    const ids = Array.from({ length: DISPATCHES }, (_, i) => `load-${i}`);
    const states = await Promise.all(
      ids.map((executionId, n) => dispatcher.dispatch({ executionId, workflow: 'pair', input: { n } })),
    );
    expect(states.map((state) => state.status)).toEqual(ids.map(() => 'completed'));
    expect(states.map((state) => state.output)).toEqual(ids.map((_, n) => n * 2));
    for (const executionId of ids) {
      const log = await served.runtime.history(executionId);
      expect(types(log)).toEqual([
        'EXECUTION_STARTED',
        'STEP_STARTED',
        'STEP_COMPLETED',
        'STEP_STARTED',
        'STEP_COMPLETED',
        'EXECUTION_COMPLETED',
      ]);
      expect(effects.get(executionId)).toBe(1);
    }
  }, 60_000);
});
