/**
 * Issue #5, sleep: a sleeping execution holds no run and nothing in the stores beyond its own
 * rows (the log and one timer), and after a restart a fresh runtime wakes it once it is due.
 */
import { defineWorkflow } from '@skein/workflow-runtime';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { backings, harness, types, until } from './support/stores.js';

const T0 = Date.UTC(2026, 5, 1);

describe.each(backings)('an idle sleep (%s store)', (_, open) => {
  const h = harness(open);

  test('a sleeping execution holds no run and only its rows; after a restart it wakes once due', async () => {
    const backing = h.open();
    const ran: string[] = [];
    const nap = defineWorkflow({
      name: 'week-nap',
      input: z.null(),
      async run(ctx) {
        await ctx.step('before', () => ran.push('before'));
        await ctx.sleep('week', 7 * 86_400_000);
        await ctx.step('after', () => ran.push('after'));
        return 'rested';
      },
    });
    let now = T0;
    const first = h.runtime({ stores: backing.stores, workflows: [nap], clock: () => now });
    await first.start(nap, null, { executionId: 'idle' });
    await until(async () => (await first.loadState('idle'))?.status === 'suspended');
    await until(async () => first.activeExecutions().length === 0);

    const { stores } = backing;
    const [timer] = await stores.timers.forExecution('idle');
    expect(timer).toMatchObject({ executionId: 'idle', dueAt: T0 + 7 * 86_400_000 });
    expect(await stores.timers.nextDueAt()).toBe(timer!.dueAt);
    expect(await stores.leases.listExpired(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
    expect(await stores.signals.pending('idle')).toEqual([]);
    expect((await first.list()).items).toMatchObject([{ executionId: 'idle', status: 'suspended' }]);
    await first.close();

    now = T0 + 7 * 86_400_000;
    const restarted = h.runtime({ stores: backing.reopen(), workflows: [nap], clock: () => now });
    expect(await restarted.wake('idle')).toMatchObject({ status: 'completed', output: 'rested' });
    expect(ran).toEqual(['before', 'after']);
    expect(types(await restarted.history('idle')).filter((t) => t === 'STEP_STARTED')).toHaveLength(2);
    expect(await restarted.stores.timers.forExecution('idle')).toEqual([]);
  });
});
