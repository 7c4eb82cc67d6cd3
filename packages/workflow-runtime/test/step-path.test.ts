/**
 * The step path does no work twice and builds nothing it does not need (adr/0069): a new
 * execution's input is parsed once, and a step's abort signal is made only when its function
 * reads it, aborted all the same when the step was aborted before. A step's info is a class
 * instance (adr/0097) that reads like the plain object it was.
 */
import { CancelledError, defineWorkflow, type StepInfo } from '@skein/workflow-runtime';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { backings, deferred, harness, until } from './support/stores.js';

describe.each(backings)('the step path on %s', (_name, openBacking) => {
  const h = harness(openBacking);

  it('execute of a new id parses its input once, and seq 0 holds the parsed value', async () => {
    const { stores } = h.open();
    let parses = 0;
    const workflow = defineWorkflow({
      name: 'parsed-once',
      input: z.object({ n: z.number() }).transform((value) => {
        parses += 1;
        return { n: value.n, doubled: value.n * 2 };
      }),
      run: async (_ctx, input) => input.doubled,
    });
    const runtime = h.runtime({ stores, workflows: [workflow] });

    const state = await runtime.execute({ executionId: 'p', workflow: workflow.name, input: { n: 2 } });

    expect(parses).toBe(1);
    expect(state.output).toBe(4);
    expect(state.input).toEqual({ n: 2, doubled: 4 });
    expect((await runtime.history('p'))[0]?.payload).toMatchObject({ input: { n: 2, doubled: 4 } });
  });

  it('a step function that reads its signal only after the execution was cancelled sees it aborted, with the reason', async () => {
    const { stores } = h.open();
    const entered = deferred();
    const release = deferred();
    const seen: AbortSignal[] = [];
    const workflow = defineWorkflow({
      name: 'late-signal',
      input: z.null(),
      async run(ctx) {
        await ctx.step('wait', async (info) => {
          entered.resolve();
          await release.promise;
          seen.push(info.signal);
        });
      },
    });
    const runtime = h.runtime({ stores, workflows: [workflow] });
    const handle = await runtime.start(workflow, null, { executionId: 'late' });
    await entered.promise;
    await runtime.cancel('late', 'no longer needed');
    release.resolve();
    await until(() => seen.length === 1);
    expect(seen[0]?.aborted).toBe(true);
    expect(seen[0]?.reason).toBeInstanceOf(CancelledError);
    await handle.result().catch(() => undefined);
    expect((await runtime.loadState('late'))?.status).toBe('cancelled');
  });

  it("a step's info holds its attempt, rerun flag and execution id, its signal, and no destination it did not declare", async () => {
    const { stores } = h.open();
    const infos: StepInfo[] = [];
    const workflow = defineWorkflow({
      name: 'info-shape',
      input: z.null(),
      async run(ctx) {
        await ctx.step('look', (info) => {
          infos.push(info);
          return info.signal.aborted;
        });
        await ctx.step('again', (info) => {
          infos.push(info);
          return info.attempt;
        });
      },
    });
    const runtime = h.runtime({ stores, workflows: [workflow] });
    await runtime.execute({ executionId: 'info', workflow: workflow.name, input: null });
    expect((await runtime.loadState('info'))?.status).toBe('completed');
    expect(infos.map((info) => [info.attempt, info.rerun, info.executionId])).toEqual([
      [1, false, 'info'],
      [1, false, 'info'],
    ]);
    for (const info of infos) {
      expect(info.signal).toBeInstanceOf(AbortSignal);
      expect('destination' in info).toBe(false);
      expect('share' in info).toBe(false);
      expect(info.destination).toBeUndefined();
      // The signal is a getter on the class, not an own key: listing the info makes no signal.
      expect(Object.keys(info)).toEqual(['attempt', 'rerun', 'executionId']);
    }
  });
});
