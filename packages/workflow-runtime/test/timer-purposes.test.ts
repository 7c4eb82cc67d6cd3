/**
 * Issue 15.6: the documented timer purposes are the recorded ones. `TIMER_SCHEDULED` is
 * written for sleeps, signal timeouts and child re-checks; a step's retry timer is recorded
 * by its `STEP_FAILED` (`retryAt`, `timerId`) and fired by `TIMER_FIRED` like any other.
 */
import {
  defineWorkflow,
  type StepFailedPayload,
  type TimerFiredPayload,
  type TimerScheduledPayload,
} from '@skein/workflow-runtime';
import { describe, expect, expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import { backings, harness, until } from './support/stores.js';

const T0 = Date.UTC(2026, 0, 1);

describe.each(backings)('timer purposes (%s store)', (_, open) => {
  const h = harness(open);

  test('TIMER_SCHEDULED purposes are sleep, signal and child; a retry timer is in STEP_FAILED', async () => {
    expectTypeOf<TimerScheduledPayload['purpose']>().toEqualTypeOf<'sleep' | 'signal' | 'child'>();
    const { stores } = h.open();
    const child = defineWorkflow({ name: 'kid', input: z.null(), run: (ctx) => ctx.sleep('kid-nap', 10) });
    let attempts = 0;
    const workflow = defineWorkflow({
      name: 'timers',
      input: z.null(),
      async run(ctx) {
        await ctx.step(
          'flaky',
          () => {
            attempts += 1;
            if (attempts === 1) throw new Error('once');
            return 'ok';
          },
          { retry: { maxAttempts: 2, initialMs: 10, jitter: 0 } },
        );
        await ctx.sleep('nap', 10);
        await ctx.waitForSignal('never', { schema: z.null(), timeoutMs: 10 });
        await ctx.child(child, null, { executionId: 'timers-kid' });
        return 'done';
      },
    });
    let now = T0;
    const runtime = h.runtime({ stores, workflows: [workflow, child], clock: () => now, childRecheckMs: 10 });
    await runtime.start(workflow, null, { executionId: 'timers' });
    // Drive every timer by moving the clock: each wake finds the next one due.
    await until(async () => {
      const state = await runtime.loadState('timers');
      if (state?.status === 'completed') return true;
      now += 10;
      await runtime.wake('timers');
      await runtime.wake('timers-kid');
      return false;
    }, 10_000);
    const log = await runtime.history('timers');
    const scheduled = log
      .filter((e) => e.type === 'TIMER_SCHEDULED')
      .map((e) => e.payload as TimerScheduledPayload);
    expect(new Set(scheduled.map((p) => p.purpose))).toEqual(new Set(['sleep', 'signal', 'child']));
    const retry = log.find((e) => e.type === 'STEP_FAILED')?.payload as StepFailedPayload;
    expect(retry).toMatchObject({ name: 'flaky', retryAt: expect.any(Number), timerId: expect.any(String) });
    expect(scheduled.some((p) => p.timerId === retry.timerId)).toBe(false);
    const fired = log
      .filter((e) => e.type === 'TIMER_FIRED')
      .map((e) => (e.payload as TimerFiredPayload).timerId);
    expect(fired).toContain(retry.timerId);
  });
});
