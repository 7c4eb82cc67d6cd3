import { defineWorkflow } from '@skein/workflow-runtime';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { backings, harness, types } from './support/stores.js';

describe.each(backings)('resuming a suspended execution (adr/0016) on %s', (_name, openBacking) => {
  const h = harness(openBacking);

  it('of several nodes resuming at once, exactly one resumes; none fences out the winner', async () => {
    const backing = h.open();
    let now = 1_000;
    let afterRuns = 0;
    const napper = defineWorkflow({
      name: 'napper',
      input: z.object({}),
      async run(ctx) {
        await ctx.sleep('nap', 60_000);
        return ctx.step('after', () => ++afterRuns);
      },
    });
    const nodes = [0, 1, 2, 3].map((i) =>
      h.runtime({
        stores: i === 0 ? backing.stores : backing.reopen(),
        workflows: [napper],
        clock: () => now,
      }),
    );
    expect((await nodes[0]!.execute({ executionId: 'r', workflow: 'napper', input: {} })).status).toBe(
      'suspended',
    );
    const fenceBefore = await backing.stores.events.currentFence('r');

    now += 60_000;
    const states = await Promise.all(
      nodes.map((node) => node.execute({ executionId: 'r', workflow: 'napper', input: {} })),
    );

    const log = await nodes[0]!.history('r');
    expect(types(log).filter((t) => t === 'EXECUTION_RESUMED')).toHaveLength(1);
    expect(types(log).at(-1)).toBe('EXECUTION_COMPLETED');
    expect(afterRuns).toBe(1);
    expect(await backing.stores.events.currentFence('r')).toBe(fenceBefore);
    expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i));
    // Every caller got a state; the losers report the execution as the winner left it.
    for (const state of states) expect(['running', 'completed']).toContain(state.status);
    expect(h.backgroundErrors).toEqual([]);
  });
});
