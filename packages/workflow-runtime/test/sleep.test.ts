/**
 * docs/architecture.md#context-calls: ctx.sleep is durable. The execution suspends with a timer row and holds no
 * worker; the runtime that suspended it wakes it in-process, and after a restart any runtime
 * over the same store wakes it once the timer is due.
 */
import { defineWorkflow } from '@skein/workflow-runtime';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { backings, harness, payloadOf, types, until } from './support/stores.js';

const T0 = Date.UTC(2026, 5, 1);

describe.each(backings)('durable sleep (%s store)', (_, open) => {
  const h = harness(open);

  function napper(ms: number) {
    const ran: string[] = [];
    const workflow = defineWorkflow({
      name: 'napper',
      input: z.null(),
      async run(ctx) {
        await ctx.step('before', () => ran.push('before'));
        await ctx.sleep('nap', ms);
        await ctx.step('after', () => ran.push('after'));
        return 'rested';
      },
    });
    return { workflow, ran };
  }

  test('ctx.sleep suspends with a timer row, and the same runtime wakes it in-process', async () => {
    const { stores } = h.open();
    const { workflow, ran } = napper(150);
    const runtime = h.runtime({ stores, workflows: [workflow] });
    const handle = await runtime.start(workflow, null, { executionId: 'nap-1' });
    await until(async () => (await handle.state())?.status === 'suspended');

    const suspended = await runtime.history('nap-1');
    expect(types(suspended)).toEqual([
      'EXECUTION_STARTED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'TIMER_SCHEDULED',
      'EXECUTION_SUSPENDED',
    ]);
    const scheduled = payloadOf<{ timerId: string; dueAt: number; name: string }>(suspended[3]);
    expect(scheduled.name).toBe('nap');
    // Due 150 ms after the sleep was reached (two clock reads, so allow the time between them).
    const delay = scheduled.dueAt - suspended[3]!.recordedAt.getTime();
    expect(delay).toBeGreaterThan(100);
    expect(delay).toBeLessThanOrEqual(150);
    expect(await stores.timers.forExecution('nap-1')).toEqual([
      { timerId: scheduled.timerId, executionId: 'nap-1', dueAt: scheduled.dueAt },
    ]);
    expect(ran).toEqual(['before']);

    expect(await handle.result()).toBe('rested');
    const log = await runtime.history('nap-1');
    expect(types(log).slice(5)).toEqual([
      'EXECUTION_RESUMED',
      'TIMER_FIRED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'EXECUTION_COMPLETED',
    ]);
    expect(log[6]!.recordedAt.getTime()).toBeGreaterThanOrEqual(scheduled.dueAt);
    expect(payloadOf<{ timerId: string }>(log[6]).timerId).toBe(scheduled.timerId);
    expect(ran).toEqual(['before', 'after']);
    expect(await stores.timers.forExecution('nap-1')).toEqual([]);
  });

  test('an in-process wake-up that fires before the clock reaches the due time is re-armed, not lost', async () => {
    const { stores } = h.open();
    const { workflow, ran } = napper(100);
    // A clock at half speed: every real-time wake-up arrives before the execution's timer is due.
    const start = Date.now();
    const slowClock = () => T0 + Math.floor((Date.now() - start) / 2);
    const runtime = h.runtime({ stores, workflows: [workflow], clock: slowClock });
    const handle = await runtime.start(workflow, null, { executionId: 'nap-slow' });
    expect(await handle.result()).toBe('rested');
    expect(ran).toEqual(['before', 'after']);
    const log = await runtime.history('nap-slow');
    const dueAt = payloadOf<{ dueAt: number }>(log.find((e) => e.type === 'TIMER_SCHEDULED')).dueAt;
    expect(log.find((e) => e.type === 'TIMER_FIRED')!.recordedAt.getTime()).toBeGreaterThanOrEqual(dueAt);
  }, 5_000);

  test('after a restart, a fresh runtime over the same store wakes it once due, and not before', async () => {
    const backing = h.open();
    const { workflow, ran } = napper(60_000);
    const first = h.runtime({ stores: backing.stores, workflows: [workflow], clock: () => T0 });
    const handle = await first.start(workflow, null, { executionId: 'nap-2' });
    await until(async () => (await handle.state())?.status === 'suspended');
    await first.close(); // the process goes away

    let now = T0 + 59_999;
    const restarted = h.runtime({ stores: backing.reopen(), workflows: [workflow], clock: () => now });
    const early = await restarted.history('nap-2');
    expect(await restarted.wake('nap-2')).toMatchObject({ status: 'suspended' });
    expect((await restarted.history('nap-2')).map((e) => e.envelopeId)).toEqual(
      early.map((e) => e.envelopeId),
    );
    expect(await restarted.execute({ executionId: 'nap-2', workflow: 'napper', input: null })).toMatchObject({
      status: 'suspended',
    });
    expect((await restarted.history('nap-2')).length).toBe(early.length);

    now = T0 + 60_000;
    const woken = await restarted.wake('nap-2');
    expect(woken).toMatchObject({ status: 'completed', output: 'rested' });
    expect(ran).toEqual(['before', 'after']);
    const log = await restarted.history('nap-2');
    expect(types(log).filter((t) => t === 'TIMER_FIRED')).toHaveLength(1);
    expect(types(log).filter((t) => t === 'EXECUTION_RESUMED')).toHaveLength(1);
    expect(await restarted.stores.timers.forExecution('nap-2')).toEqual([]);
  });

  test('a due timer claimed by another node is left to that node', async () => {
    const backing = h.open();
    const { workflow, ran } = napper(1_000);
    const first = h.runtime({ stores: backing.stores, workflows: [workflow], clock: () => T0 });
    const handle = await first.start(workflow, null, { executionId: 'nap-3' });
    await until(async () => (await handle.state())?.status === 'suspended');
    await first.close();

    const [timer] = await backing.stores.timers.forExecution('nap-3');
    const claimedElsewhere = await backing.stores.timers.claim(timer!.timerId, {
      now: T0 + 1_000,
      owner: 'other-node',
      claimTtlMs: 30_000,
    });
    expect(claimedElsewhere).toBe(true);
    const restarted = h.runtime({ stores: backing.stores, workflows: [workflow], clock: () => T0 + 1_000 });
    expect(await restarted.wake('nap-3')).toMatchObject({ status: 'suspended' });
    expect(ran).toEqual(['before']);
    // The owner of the claim resumes it.
    expect(await restarted.wake('nap-3', { claimed: true })).toMatchObject({ status: 'completed' });
  });

  test('ctx.sleepUntil a past time does not suspend; the timer is recorded as fired at once', async () => {
    const { stores } = h.open();
    const late = defineWorkflow({
      name: 'late',
      input: z.null(),
      async run(ctx) {
        await ctx.sleepUntil('deadline', new Date(T0 - 1));
        return 'on time';
      },
    });
    const runtime = h.runtime({ stores, workflows: [late], clock: () => T0 });
    expect(await (await runtime.start(late, null, { executionId: 'late-1' })).result()).toBe('on time');
    expect(types(await runtime.history('late-1'))).toEqual([
      'EXECUTION_STARTED',
      'TIMER_SCHEDULED',
      'TIMER_FIRED',
      'EXECUTION_COMPLETED',
    ]);
  });
});
