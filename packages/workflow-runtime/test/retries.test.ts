/**
 * docs/architecture.md#context-calls, steps: a failure with budget left appends STEP_FAILED with `retryAt` and a
 * durable timer and suspends (no spinning); NonRetryableError skips the budget; after the last
 * attempt the workflow gets StepFailedError; `timeoutMs` fails an attempt; delays are
 * deterministic and bounded.
 */
import {
  defineWorkflow,
  NonRetryableError,
  StepFailedError,
  StepTimeoutError,
  type WorkflowContext,
} from '@skein/workflow-runtime';
import { resolveRetryPolicy, retryDelay } from '@skein/workflow-runtime/internal';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { backings, harness, payloadOf, types, until } from './support/stores.js';

const T0 = Date.UTC(2026, 0, 1);

/** A clock tests move by hand; the runtime's own wake-ups never see time pass. */
function manualClock() {
  let now = T0;
  return {
    clock: () => now,
    set: (at: number) => {
      now = at;
    },
  };
}

describe.each(backings)('step retries (%s store)', (_, open) => {
  const h = harness(open);

  function flaky(failures: number, retry: { maxAttempts: number; initialMs?: number; factor?: number }) {
    const attempts: number[] = [];
    const workflow = defineWorkflow({
      name: 'flaky',
      input: z.null(),
      async run(ctx: WorkflowContext) {
        return ctx.step(
          'call',
          (info) => {
            attempts.push(info.attempt);
            if (attempts.length <= failures) throw new Error(`failure ${attempts.length}`);
            return `ok after ${attempts.length}`;
          },
          { retry: { ...retry, jitter: 0 } },
        );
      },
    });
    return { workflow, attempts };
  }

  test('a failure with budget left: STEP_FAILED with retryAt and timerId, a durable timer, EXECUTION_SUSPENDED, no spinning', async () => {
    const { stores } = h.open();
    const time = manualClock();
    const { workflow, attempts } = flaky(2, { maxAttempts: 3, initialMs: 1_000, factor: 2 });
    const runtime = h.runtime({ stores, workflows: [workflow], clock: time.clock });
    const handle = await runtime.start(workflow, null, { executionId: 'flaky-1' });
    await until(async () => (await handle.state())?.status === 'suspended');

    let log = await runtime.history('flaky-1');
    expect(types(log)).toEqual(['EXECUTION_STARTED', 'STEP_STARTED', 'STEP_FAILED', 'EXECUTION_SUSPENDED']);
    const failed = log[2]?.payload as { attempt: number; retryAt: number; timerId: string; error: Error };
    expect(failed).toMatchObject({ attempt: 1, retryAt: T0 + 1_000, timerId: expect.any(String) });
    expect(failed.error.message).toBe('failure 1');
    expect(log[3]?.payload).toMatchObject({ wakeAt: T0 + 1_000 });
    expect(await stores.timers.forExecution('flaky-1')).toEqual([
      { timerId: failed.timerId, executionId: 'flaky-1', dueAt: T0 + 1_000 },
    ]);

    // Real time passes, virtual time does not: no attempt, no event.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(attempts).toEqual([1]);
    expect(await runtime.wake('flaky-1')).toMatchObject({ status: 'suspended' });
    expect((await runtime.history('flaky-1')).length).toBe(log.length);

    time.set(T0 + 1_000);
    expect(await runtime.wake('flaky-1')).toMatchObject({ status: 'suspended' });
    log = await runtime.history('flaky-1');
    const second = log.filter((e) => e.type === 'STEP_FAILED')[1]?.payload as {
      attempt: number;
      retryAt: number;
    };
    expect(second).toMatchObject({ attempt: 2, retryAt: T0 + 1_000 + 2_000 });

    time.set(T0 + 3_000);
    const done = await runtime.wake('flaky-1');
    expect(done).toMatchObject({ status: 'completed', output: 'ok after 3' });
    expect(attempts).toEqual([1, 2, 3]);
    log = await runtime.history('flaky-1');
    expect(types(log)).toEqual([
      'EXECUTION_STARTED',
      'STEP_STARTED',
      'STEP_FAILED',
      'EXECUTION_SUSPENDED',
      'EXECUTION_RESUMED',
      'TIMER_FIRED',
      'STEP_STARTED',
      'STEP_FAILED',
      'EXECUTION_SUSPENDED',
      'EXECUTION_RESUMED',
      'TIMER_FIRED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'EXECUTION_COMPLETED',
    ]);
    expect(await stores.timers.forExecution('flaky-1')).toEqual([]);
    expect(await handle.result()).toBe('ok after 3');
  });

  test('the runtime wakes its own retry in-process and the execution completes', async () => {
    const { stores } = h.open();
    const { workflow, attempts } = flaky(1, { maxAttempts: 2, initialMs: 30 });
    const runtime = h.runtime({ stores, workflows: [workflow] });
    const handle = await runtime.start(workflow, null, { executionId: 'flaky-2' });
    expect(await handle.result()).toBe('ok after 2');
    expect(attempts).toEqual([1, 2]);
    const log = await runtime.history('flaky-2');
    const failedAt = log.find((e) => e.type === 'STEP_FAILED');
    const retriedAt = log.filter((e) => e.type === 'STEP_STARTED')[1];
    expect(retriedAt!.recordedAt.getTime()).toBeGreaterThanOrEqual(
      payloadOf<{ retryAt: number }>(failedAt).retryAt,
    );
  });

  test('NonRetryableError skips the rest of the budget; the workflow catches StepFailedError and completes', async () => {
    const { stores } = h.open();
    let calls = 0;
    const strict = defineWorkflow({
      name: 'strict',
      input: z.null(),
      async run(ctx) {
        try {
          await ctx.step(
            'validate',
            () => {
              calls += 1;
              throw new NonRetryableError('card number is invalid');
            },
            { retry: { maxAttempts: 5, initialMs: 1 } },
          );
          return 'unreachable';
        } catch (error) {
          if (!(error instanceof StepFailedError)) throw error;
          return { attempts: error.attempts, cause: (error.cause as Error).name, step: error.step };
        }
      },
    });
    const runtime = h.runtime({ stores, workflows: [strict] });
    const output = await (await runtime.start(strict, null, { executionId: 'strict-1' })).result();
    expect(output).toEqual({ attempts: 1, cause: 'NonRetryableError', step: 'validate' });
    expect(calls).toBe(1);
    const log = await runtime.history('strict-1');
    expect(types(log)).toEqual(['EXECUTION_STARTED', 'STEP_STARTED', 'STEP_FAILED', 'EXECUTION_COMPLETED']);
    expect(log[2]?.payload).not.toHaveProperty('retryAt');
    expect(await stores.timers.forExecution('strict-1')).toEqual([]);
  });

  test('after the last attempt StepFailedError reaches the workflow, which may catch it and complete', async () => {
    const { stores } = h.open();
    const time = manualClock();
    const hopeless = defineWorkflow({
      name: 'hopeless',
      input: z.null(),
      async run(ctx) {
        try {
          await ctx.step(
            'call',
            (info) => {
              throw new Error(`down (attempt ${info.attempt})`);
            },
            { retry: { maxAttempts: 2, initialMs: 500, jitter: 0 } },
          );
          return 'unreachable';
        } catch (error) {
          return { message: (error as Error).message, name: (error as Error).name };
        }
      },
    });
    const runtime = h.runtime({ stores, workflows: [hopeless], clock: time.clock });
    const handle = await runtime.start(hopeless, null, { executionId: 'hopeless-1' });
    await until(async () => (await handle.state())?.status === 'suspended');
    time.set(T0 + 500);
    const state = await runtime.wake('hopeless-1');
    expect(state?.output).toEqual({
      name: 'StepFailedError',
      message: 'execution "hopeless-1": step "call" failed after 2 attempts: down (attempt 2)',
    });
    const failures = (await runtime.history('hopeless-1')).filter((e) => e.type === 'STEP_FAILED');
    expect(failures.map((e) => e.payload)).toEqual([
      expect.objectContaining({ attempt: 1, retryAt: T0 + 500 }),
      expect.not.objectContaining({ retryAt: expect.anything() }),
    ]);
    expect(payloadOf<{ attempt: number }>(failures[1]).attempt).toBe(2);
  });

  test('timeoutMs fails the attempt with StepTimeoutError (aborting its signal) and the step is retried', async () => {
    const { stores } = h.open();
    const time = manualClock();
    const signals: AbortSignal[] = [];
    const slow = defineWorkflow({
      name: 'slow',
      input: z.null(),
      run: (ctx) =>
        ctx.step(
          'fetch',
          (info) => {
            signals.push(info.signal);
            return info.attempt === 1 ? new Promise<string>(() => {}) : 'fetched';
          },
          { timeoutMs: 20, retry: { maxAttempts: 2, initialMs: 1_000 } },
        ),
    });
    const runtime = h.runtime({ stores, workflows: [slow], clock: time.clock });
    const handle = await runtime.start(slow, null, { executionId: 'slow-1' });
    await until(async () => (await handle.state())?.status === 'suspended');

    const failed = (await runtime.history('slow-1')).find((e) => e.type === 'STEP_FAILED')?.payload as {
      attempt: number;
      error: Error;
      retryAt: number;
    };
    expect(failed.attempt).toBe(1);
    expect(failed.error.name).toBe('StepTimeoutError');
    expect(failed.error.message).toBe('step "fetch" did not finish within 20 ms');
    expect(signals[0]?.aborted).toBe(true);
    expect(signals[0]?.reason).toBeInstanceOf(StepTimeoutError);

    time.set(failed.retryAt);
    expect(await runtime.wake('slow-1')).toMatchObject({ status: 'completed', output: 'fetched' });
    expect(signals).toHaveLength(2);
    expect(signals[1]?.aborted).toBe(false);
  });

  test('retry times are deterministic: the same execution on fresh stores gets the same retryAt', async () => {
    const retryAts: number[] = [];
    for (let run = 0; run < 2; run++) {
      const { stores } = h.open();
      const jittered = defineWorkflow({
        name: 'jittered',
        input: z.null(),
        run: (ctx) =>
          ctx.step(
            'call',
            () => {
              throw new Error('down');
            },
            { retry: { maxAttempts: 3, jitter: 1 } },
          ),
      });
      const runtime = h.runtime({ stores, workflows: [jittered], clock: manualClock().clock });
      const handle = await runtime.start(jittered, null, { executionId: 'same-id' });
      await until(async () => (await handle.state())?.status === 'suspended');
      const failed = (await runtime.history('same-id')).find((e) => e.type === 'STEP_FAILED');
      retryAts.push(payloadOf<{ retryAt: number }>(failed).retryAt);
    }
    expect(retryAts[0]).toBe(retryAts[1]);
    expect(retryAts[0]).toBeGreaterThan(T0);
  });
});

describe('retryDelay', () => {
  const policy = fc.record({
    maxAttempts: fc.integer({ min: 1, max: 50 }),
    initialMs: fc.integer({ min: 0, max: 10_000 }),
    factor: fc.double({ min: 1, max: 4, noNaN: true }),
    maxMs: fc.integer({ min: 0, max: 120_000 }),
    jitter: fc.double({ min: 0, max: 1, noNaN: true }),
  });

  test('is deterministic per key and attempt, never negative and never over maxMs', () => {
    fc.assert(
      fc.property(policy, fc.integer({ min: 1, max: 60 }), fc.string(), (p, attempt, key) => {
        const delay = retryDelay(resolveRetryPolicy(p), attempt, key);
        expect(retryDelay(resolveRetryPolicy(p), attempt, key)).toBe(delay);
        expect(Number.isInteger(delay)).toBe(true);
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThanOrEqual(p.maxMs);
      }),
      { numRuns: 1_000 },
    );
  });

  test('without jitter it is exponential backoff capped at maxMs; jitter stays within its fraction', () => {
    fc.assert(
      fc.property(policy, fc.integer({ min: 1, max: 20 }), fc.string(), (p, attempt, key) => {
        const base = Math.min(p.maxMs, p.initialMs * p.factor ** (attempt - 1));
        expect(retryDelay(resolveRetryPolicy({ ...p, jitter: 0 }), attempt, key)).toBe(Math.round(base));
        const jittered = retryDelay(resolveRetryPolicy(p), attempt, key);
        expect(Math.abs(jittered - base)).toBeLessThanOrEqual(base * p.jitter + 0.5);
      }),
      { numRuns: 1_000 },
    );
  });

  test('defaults: one attempt, 100 ms doubling up to 60 s, 20% jitter', () => {
    expect(resolveRetryPolicy()).toEqual({
      maxAttempts: 1,
      initialMs: 100,
      factor: 2,
      maxMs: 60_000,
      jitter: 0.2,
    });
  });
});
