/**
 * Issue #23 item 7, adr/0066: a step's retry controls on every store. `nonRetryable` (names or
 * classes) fails the step at once; `shouldRetry(error, attempt)` decides while budget is left
 * (a throw = no retry, recorded); an error's own `retryAfterMs` replaces the backoff for that
 * attempt (bounded by `maxRetryAfterMs`) as a durable timer. Every decision is in the log
 * (`noRetry`, `delayMs`, `retryAfterMs` on `STEP_FAILED`), and a replay never decides again.
 */
import {
  createRuntime,
  defineWorkflow,
  type Envelope,
  InvalidInputError,
  RetryAfterError,
  type Runtime,
  retryAfter,
  type StepRetryPolicy,
  type Stores,
} from '@skein/workflow-runtime';
import { afterEach, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { realStores } from './support/real-stores.js';
import { until } from './support/stores.js';

const T0 = Date.UTC(2026, 0, 1);

class CardDeclined extends Error {
  override name = 'CardDeclined';
}
class StolenCard extends CardDeclined {
  override name = 'StolenCard';
}
class RateLimited extends Error {
  override name = 'RateLimited';
  retryAfterMs = 30_000;
}

function failed(log: readonly Envelope[]): Record<string, unknown>[] {
  return log
    .filter((e) => e.type === 'STEP_FAILED')
    .map((e) => e.payload as unknown as Record<string, unknown>);
}

describe.each(realStores)('retry controls (%s)', (_, openStores) => {
  const opened: { stores: Stores; runtimes: Runtime[] }[] = [];
  afterEach(async () => {
    for (const { stores, runtimes } of opened.splice(0)) {
      for (const runtime of runtimes) await runtime.close();
      await stores.close();
    }
  });

  /** A workflow whose one step throws `errors[n]` on attempt n+1 (then returns 'ok'). */
  function charging(errors: unknown[], retry: StepRetryPolicy) {
    const attempts: number[] = [];
    const workflow = defineWorkflow({
      name: 'charge',
      input: z.null(),
      async run(ctx) {
        return ctx.step(
          'charge',
          (info) => {
            attempts.push(info.attempt);
            const error = errors[attempts.length - 1];
            if (error !== undefined) throw error;
            return 'ok';
          },
          { retry: { jitter: 0, initialMs: 100, ...retry } },
        );
      },
    });
    return { workflow, attempts };
  }

  async function setUp(workflow: ReturnType<typeof charging>['workflow']) {
    const stores = await openStores();
    let now = T0;
    const runtimes: Runtime[] = [];
    opened.push({ stores, runtimes });
    const open = () => {
      const runtime = createRuntime({ stores, workflows: [workflow], clock: () => now, maintenance: false });
      runtimes.push(runtime);
      return runtime;
    };
    return { stores, open, setNow: (at: number) => (now = at) };
  }

  test('nonRetryable by name fails the step at the first attempt, budget left; the log says why', async () => {
    const { workflow, attempts } = charging([new CardDeclined('no funds')], {
      maxAttempts: 5,
      nonRetryable: ['CardDeclined'],
    });
    const { open } = await setUp(workflow);
    const runtime = open();
    const state = await runtime.execute({ executionId: 'c1', workflow: 'charge', input: null });
    expect(state.status).toBe('failed');
    expect(attempts).toEqual([1]);
    const [only, ...rest] = failed(await runtime.history('c1'));
    expect(rest).toEqual([]);
    expect(only).toMatchObject({ attempt: 1, noRetry: 'non-retryable' });
    expect(only).not.toHaveProperty('retryAt');
  });

  test('nonRetryable by class matches a subclass (instanceof); by name matches the class chain', async () => {
    for (const entry of [CardDeclined, 'CardDeclined'] as const) {
      const { workflow, attempts } = charging([new StolenCard('stolen')], {
        maxAttempts: 3,
        nonRetryable: [entry],
      });
      const { open } = await setUp(workflow);
      const state = await open().execute({ executionId: 'c2', workflow: 'charge', input: null });
      expect(state.status).toBe('failed');
      expect(attempts).toEqual([1]);
    }
  });

  test('an error not listed keeps its budget', async () => {
    const { workflow, attempts } = charging([new Error('flaky')], {
      maxAttempts: 2,
      nonRetryable: ['CardDeclined'],
    });
    const { open, setNow } = await setUp(workflow);
    const runtime = open();
    expect((await runtime.execute({ executionId: 'c3', workflow: 'charge', input: null })).status).toBe(
      'suspended',
    );
    const [first] = failed(await runtime.history('c3'));
    expect(first).toMatchObject({ retryAt: T0 + 100, delayMs: 100 });
    setNow(T0 + 100);
    expect(await runtime.wake('c3')).toMatchObject({ status: 'completed', output: 'ok' });
    expect(attempts).toEqual([1, 2]);
  });

  test('shouldRetry gets the error and the attempt; false fails the step and is recorded', async () => {
    const seen: [string, number][] = [];
    const { workflow, attempts } = charging([new Error('a'), new Error('b'), new Error('c')], {
      maxAttempts: 5,
      shouldRetry: (error, attempt) => {
        seen.push([(error as Error).message, attempt]);
        return attempt < 2;
      },
    });
    const { open, setNow } = await setUp(workflow);
    const runtime = open();
    await runtime.execute({ executionId: 'c4', workflow: 'charge', input: null });
    setNow(T0 + 60_000);
    expect(await runtime.wake('c4')).toMatchObject({ status: 'failed' });
    expect(attempts).toEqual([1, 2]);
    expect(seen).toEqual([
      ['a', 1],
      ['b', 2],
    ]);
    const log = failed(await runtime.history('c4'));
    expect(log.map((p) => p.noRetry ?? 'retried')).toEqual(['retried', 'should-retry']);
    // A replay reads the decisions from the log: the predicate is not asked again.
    const replayed = await open().execute({ executionId: 'c4', workflow: 'charge', input: null });
    expect(replayed.status).toBe('failed');
    expect(seen).toHaveLength(2);
  });

  test('a shouldRetry that throws means no retry, and what it threw is recorded', async () => {
    const { workflow, attempts } = charging([new Error('boom')], {
      maxAttempts: 5,
      shouldRetry: () => {
        throw new TypeError('predicate bug');
      },
    });
    const { open } = await setUp(workflow);
    const runtime = open();
    expect((await runtime.execute({ executionId: 'c5', workflow: 'charge', input: null })).status).toBe(
      'failed',
    );
    expect(attempts).toEqual([1]);
    const [only] = failed(await runtime.history('c5'));
    expect(only).toMatchObject({ noRetry: 'should-retry-threw' });
    expect(String(only?.shouldRetryThrew)).toContain('predicate bug');
  });

  test("an error's retryAfterMs replaces the backoff: a durable timer, taken by a restarted runtime", async () => {
    const { workflow, attempts } = charging([new RateLimited('slow down')], {
      maxAttempts: 3,
      initialMs: 100,
    });
    const { stores, open, setNow } = await setUp(workflow);
    const first = open();
    expect((await first.execute({ executionId: 'c6', workflow: 'charge', input: null })).status).toBe(
      'suspended',
    );
    const [failure] = failed(await first.history('c6'));
    expect(failure).toMatchObject({ retryAt: T0 + 30_000, delayMs: 30_000, retryAfterMs: 30_000 });
    expect(await stores.timers.forExecution('c6')).toMatchObject([{ dueAt: T0 + 30_000 }]);
    await first.close();
    // A new process: not due before 30 s, due after.
    const second = open();
    setNow(T0 + 29_999);
    expect(await second.wake('c6')).toMatchObject({ status: 'suspended' });
    setNow(T0 + 30_000);
    expect(await second.wake('c6')).toMatchObject({ status: 'completed', output: 'ok' });
    expect(attempts).toEqual([1, 2]);
  });

  test('maxRetryAfterMs bounds what an error asks for; retryAfter(ms, cause) is such an error', async () => {
    const asked = retryAfter(90_000, new Error('429'));
    expect(asked).toBeInstanceOf(RetryAfterError);
    expect(asked.retryAfterMs).toBe(90_000);
    const { workflow } = charging([asked], { maxAttempts: 2, maxRetryAfterMs: 5_000 });
    const { open } = await setUp(workflow);
    const runtime = open();
    await runtime.execute({ executionId: 'c7', workflow: 'charge', input: null });
    const [failure] = failed(await runtime.history('c7'));
    expect(failure).toMatchObject({ retryAt: T0 + 5_000, delayMs: 5_000, retryAfterMs: 90_000 });
    expect((failure!.error as Error).name).toBe('RetryAfterError');
  });

  test('retryAfterMs does not stretch the budget: the last attempt fails the step', async () => {
    const { workflow, attempts } = charging([new RateLimited('x')], { maxAttempts: 1 });
    const { open } = await setUp(workflow);
    const state = await open().execute({ executionId: 'c8', workflow: 'charge', input: null });
    expect(state.status).toBe('failed');
    expect(attempts).toEqual([1]);
  });

  test('L7: bad controls are refused at the call, naming the field; the step writes nothing', async () => {
    const cases: [unknown, string][] = [
      [{ nonRetryable: [3] }, 'retry.nonRetryable.0'],
      [{ nonRetryable: [''] }, 'retry.nonRetryable.0'],
      [{ shouldRetry: 'yes' }, 'retry.shouldRetry'],
      [{ maxRetryAfterMs: -1 }, 'retry.maxRetryAfterMs'],
    ];
    for (const [retry, field] of cases) {
      let ran = false;
      const workflow = defineWorkflow({
        name: 'charge',
        input: z.null(),
        async run(ctx) {
          try {
            await ctx.step(
              'charge',
              () => {
                ran = true;
                return 1;
              },
              { retry: retry as StepRetryPolicy },
            );
          } catch (error) {
            expect(error).toBeInstanceOf(InvalidInputError);
            expect((error as InvalidInputError).message).toContain(field);
            return 'refused';
          }
          return 'ran';
        },
      });
      const { open } = await setUp(workflow as never);
      const runtime = open();
      const id = `bad-${field}-${String(cases.findIndex((c) => c[1] === field))}`;
      const state = await runtime.execute({ executionId: id, workflow: 'charge', input: null });
      expect(state).toMatchObject({ status: 'completed', output: 'refused' });
      expect(ran).toBe(false);
      expect((await runtime.history(id)).map((e) => e.type)).not.toContain('STEP_STARTED');
    }
  });

  test('a workflow that runs with retry controls in the background completes (the in-process wake-up)', async () => {
    const { workflow, attempts } = charging([new RateLimited('x')], { maxAttempts: 2, maxRetryAfterMs: 20 });
    const stores = await openStores();
    const runtime = createRuntime({ stores, workflows: [workflow] });
    opened.push({ stores, runtimes: [runtime] });
    const handle = await runtime.start(workflow, null, { executionId: 'c9' });
    await until(async () => (await handle.state())?.status === 'completed');
    expect(attempts).toEqual([1, 2]);
  });
});
