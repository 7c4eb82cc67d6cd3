/**
 * Issue #5, cancellation: `runtime.cancel` takes the execution over (new fence,
 * `CANCEL_REQUESTED`), the workflow sees `CancelledError` at its next context call, cleanup in
 * `finally` runs normally, and the execution ends `EXECUTION_CANCELLED` whatever the body does.
 */
import {
  CancelledError,
  defineWorkflow,
  ExecutionFailedError,
  ExecutionNotFoundError,
  readHistory,
} from '@skein/workflow-runtime';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
  backings,
  CrashingEventStore,
  deferred,
  harness,
  payloadOf,
  types,
  until,
  untilLogHas,
  withEvents,
} from './support/stores.js';

describe.each(backings)('cancellation (%s store)', (_, open) => {
  const h = harness(open);

  function sleeper() {
    const ran: string[] = [];
    const seen: unknown[] = [];
    const workflow = defineWorkflow({
      name: 'sleeper',
      input: z.null(),
      async run(ctx) {
        try {
          await ctx.sleep('long', 3_600_000);
          return 'woke';
        } catch (error) {
          seen.push(error);
          throw error;
        } finally {
          await ctx.step('cleanup-1', () => ran.push('cleanup-1'));
          await ctx.step('cleanup-2', () => ran.push('cleanup-2'));
        }
      },
    });
    return { workflow, ran, seen };
  }

  test('a suspended execution is cancelled at once: CancelledError at its wait, cleanup runs, it ends EXECUTION_CANCELLED', async () => {
    const { stores } = h.open();
    const { workflow, ran, seen } = sleeper();
    const runtime = h.runtime({ stores, workflows: [workflow] });
    await runtime.start(workflow, null, { executionId: 'c-1' });
    await until(async () => (await runtime.loadState('c-1'))?.status === 'suspended');
    expect(await stores.timers.forExecution('c-1')).toHaveLength(1);

    expect(await runtime.cancel('c-1', 'customer asked')).toEqual({ cancelled: true, status: 'running' });
    const failure = runtime.result('c-1');
    await expect(failure).rejects.toBeInstanceOf(ExecutionFailedError);
    await expect(failure).rejects.toThrow(/ended cancelled/);
    const log = await runtime.history('c-1');
    expect(types(log).slice(3)).toEqual([
      'CANCEL_REQUESTED',
      'EXECUTION_RESUMED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'EXECUTION_CANCELLED',
    ]);
    expect(payloadOf(log[3])).toMatchObject({ reason: 'customer asked' });
    expect(payloadOf<{ reason: string; error: Error }>(log.at(-1)).reason).toBe('customer asked');
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBeInstanceOf(CancelledError);
    expect(ran).toEqual(['cleanup-1', 'cleanup-2']);
    expect(await stores.timers.forExecution('c-1')).toEqual([]);
  });

  test('a step in flight in the fenced-out holder is not run again, and the holder writes nothing more', async () => {
    const { stores } = h.open();
    const gate = deferred();
    const calls: string[] = [];
    const workflow = defineWorkflow({
      name: 'busy',
      input: z.null(),
      async run(ctx) {
        try {
          await ctx.step('slow', async () => {
            calls.push('slow');
            await gate.promise;
            return 'done';
          });
          await ctx.step('after', () => calls.push('after'));
        } finally {
          await ctx.step('cleanup', () => calls.push('cleanup'));
        }
      },
    });
    const runtime = h.runtime({ stores, workflows: [workflow] });
    await runtime.start(workflow, null, { executionId: 'busy' });
    await untilLogHas(runtime, 'busy', 'STEP_STARTED');
    await runtime.cancel('busy', 'stop');
    await untilLogHas(runtime, 'busy', 'EXECUTION_CANCELLED');
    gate.resolve(); // the old holder's step returns; its STEP_COMPLETED is fenced out
    await until(async () => runtime.activeExecutions().length === 0);
    const log = await runtime.history('busy');
    expect(types(log)).toEqual([
      'EXECUTION_STARTED',
      'STEP_STARTED',
      'CANCEL_REQUESTED',
      'EXECUTION_RESUMED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'EXECUTION_CANCELLED',
    ]);
    expect(payloadOf<{ name: string }>(log[4]).name).toBe('cleanup');
    expect(calls).toEqual(['slow', 'cleanup']);
  });

  test('a body that swallows CancelledError and returns still ends cancelled, with no output', async () => {
    const { stores } = h.open();
    const stubborn = defineWorkflow({
      name: 'stubborn',
      input: z.null(),
      async run(ctx) {
        try {
          await ctx.sleep('nap', 3_600_000);
        } catch {
          return 'ignored the cancel';
        }
        return 'woke';
      },
    });
    const runtime = h.runtime({ stores, workflows: [stubborn] });
    await runtime.start(stubborn, null, { executionId: 'stub' });
    await until(async () => (await runtime.loadState('stub'))?.status === 'suspended');
    await runtime.cancel('stub', 'no');
    await expect(runtime.result('stub')).rejects.toThrow(/ended cancelled/);
    const state = await runtime.loadState('stub');
    expect(state).toMatchObject({ status: 'cancelled' });
    expect(state?.output).toBeUndefined();
    expect(types(await runtime.history('stub')).filter((t) => t === 'EXECUTION_COMPLETED')).toEqual([]);
  });

  test('cancelling a finished execution is a no-op that says so, and writes nothing; an unknown one is refused', async () => {
    const { stores } = h.open();
    const quick = defineWorkflow({ name: 'quick', input: z.null(), run: async () => 'done' });
    const runtime = h.runtime({ stores, workflows: [quick] });
    await (await runtime.start(quick, null, { executionId: 'q' })).result();
    const before = await runtime.history('q');
    expect(await runtime.cancel('q', 'too late')).toEqual({ cancelled: false, status: 'completed' });
    expect(await runtime.history('q')).toEqual(before);
    expect(await stores.events.currentFence('q')).toBe(before.at(-1)!.fence);
    await expect(runtime.cancel('ghost', 'x')).rejects.toBeInstanceOf(ExecutionNotFoundError);
    await expect(runtime.cancel('q', '')).rejects.toThrow(/reason/);
  });

  test('a crash in the middle of cleanup: recovery delivers CancelledError at the same position and finishes cleanup', async () => {
    const { stores } = h.open();
    const { workflow, ran, seen } = sleeper();
    // Appends: [STARTED, TIMER_SCHEDULED, SUSPENDED], [CANCEL_REQUESTED, RESUMED], [STEP_STARTED]; then it dies.
    const doomed = h.runtime({
      stores: withEvents(stores, new CrashingEventStore(stores.events, 3)),
      workflows: [workflow],
    });
    await doomed.start(workflow, null, { executionId: 'mid' });
    await until(async () => (await doomed.loadState('mid'))?.status === 'suspended');
    await doomed.cancel('mid', 'halt');
    await until(async () => doomed.activeExecutions().length === 0);
    await doomed.close();
    expect(ran).toEqual(['cleanup-1']);
    expect(types(await readHistory(stores.events, 'mid')).at(-1)).toBe('STEP_STARTED');

    const runtime = h.runtime({ stores, workflows: [workflow] });
    expect(await runtime.cancel('mid', 'again')).toMatchObject({ cancelled: true, alreadyRequested: true });
    const state = await runtime.execute({ executionId: 'mid', workflow: 'sleeper' });
    expect(state.status).toBe('cancelled');
    // cleanup-1 was in flight at the crash (it may run twice); cleanup-2 runs once.
    expect(ran).toEqual(['cleanup-1', 'cleanup-1', 'cleanup-2']);
    expect(seen).toHaveLength(2);
    const log = await runtime.history('mid');
    expect(types(log).filter((t) => t === 'CANCEL_REQUESTED')).toHaveLength(1);
    expect(payloadOf<{ reason: string }>(log.at(-1)).reason).toBe('halt');
  });
  test('15.5: runtime.cancel aborts StepInfo.signal of a step running in this process, so a long step stops early', async () => {
    const { stores } = h.open();
    const started = deferred();
    let reason: unknown;
    const workflow = defineWorkflow({
      name: 'long-step',
      input: z.null(),
      async run(ctx) {
        try {
          return await ctx.step('upload', ({ signal }) => {
            started.resolve();
            return new Promise<string>((resolve, reject) => {
              const timer = setTimeout(resolve, 60_000, 'uploaded');
              signal.addEventListener('abort', () => {
                clearTimeout(timer);
                reason = signal.reason;
                reject(signal.reason);
              });
            });
          });
        } finally {
          await ctx.step('cleanup', () => 'cleaned');
        }
      },
    });
    const runtime = h.runtime({ stores, workflows: [workflow] });
    const handle = await runtime.start(workflow, null, { executionId: 'long' });
    await started.promise;
    expect(await runtime.cancel('long', 'user gave up')).toMatchObject({ cancelled: true });
    await expect(handle.result()).rejects.toBeInstanceOf(ExecutionFailedError);
    expect(reason).toBeInstanceOf(CancelledError);
    expect((reason as CancelledError).reason).toBe('user gave up');
    const state = await runtime.loadState('long');
    expect(state?.status).toBe('cancelled');
    expect(state?.steps.map((step) => step.name)).toEqual(['cleanup']);
    // The aborted attempt was the fenced-out holder's: it recorded nothing.
    expect(types(await runtime.history('long')).filter((t) => t === 'STEP_FAILED')).toEqual([]);
    await runtime.close();
  });
});
