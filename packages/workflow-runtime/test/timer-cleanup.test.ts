import { defineWorkflow } from '@skein/workflow-runtime';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { backings, harness } from './support/stores.js';

describe.each(backings)('timer rows after the end (%s)', (_name, openBacking) => {
  const h = harness(openBacking);

  it('a terminal execution leaves no timer rows, even one a crash left behind after TIMER_FIRED', async () => {
    const { stores } = h.open();
    const workflow = defineWorkflow({
      name: 'napper',
      input: z.object({}),
      async run(ctx) {
        await ctx.sleep('nap', 0);
        return ctx.step('after', () => 'done');
      },
    });
    const runtime = h.runtime({ stores, workflows: [workflow] });
    // A row as a crash would leave it: its TIMER_FIRED made durable, the row never deleted.
    await stores.timers.schedule({ timerId: 'left-behind', executionId: 'u', dueAt: 0 });
    const state = await runtime.execute({ executionId: 'u', workflow: 'napper', input: {} });
    expect(state.status).toBe('completed');
    expect(await stores.timers.forExecution('u')).toEqual([]);
  });
});
