/**
 * Issue 15.4, adr/0032: every duration is checked and normalised at the API boundary by one
 * schema (`durationMsSchema`): a fraction rounds up to a whole millisecond; Infinity, NaN,
 * strings and negative numbers are refused with an `InvalidInputError` naming the call and
 * the field, before anything is written. The PostgreSQL repro (`ctx.sleep('nap', 1.5)`
 * as the first call and after a step, `waitForSignal({ timeoutMs: 10.5 })`) completes.
 */
import { Supervisor } from '@skein/worker-runtime-local';
import {
  createRuntime,
  defineWorkflow,
  InvalidInputError,
  type Runtime,
  type RuntimeOptions,
  type Stores,
  type TimerScheduledPayload,
  type WorkflowContext,
} from '@skein/workflow-runtime';
import { durationMs } from '@skein/workflow-runtime/internal';
import { afterEach, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { realStores } from './support/real-stores.js';

const bad: [string, unknown][] = [
  ['Infinity', Number.POSITIVE_INFINITY],
  ['NaN', Number.NaN],
  ['a string', '100'],
  ['a negative number', -1],
];

test('durationMs rounds a fraction up and refuses what is not a finite ms >= 0, naming the field', () => {
  expect(durationMs(1.5, 'ctx.sleep("nap")', 'ms')).toBe(2);
  expect(durationMs(0, 'ctx.sleep("nap")', 'ms')).toBe(0);
  expect(durationMs(10, 'ctx.sleep("nap")', 'ms')).toBe(10);
  for (const [, value] of bad) {
    expect(() => durationMs(value, 'ctx.sleep("nap")', 'ms')).toThrow(InvalidInputError);
    expect(() => durationMs(value, 'ctx.sleep("nap")', 'ms')).toThrow(/ctx\.sleep\("nap"\) is invalid: ms: /);
  }
  expect(() => durationMs(Number.POSITIVE_INFINITY, 'w', 'ms')).toThrow(
    'w is invalid: ms: must be a finite number of milliseconds >= 0, got Infinity',
  );
  expect(() => durationMs('100', 'w', 'ms')).toThrow(
    'must be a finite number of milliseconds >= 0, got "100"',
  );
});

describe.each(realStores)('durations at the boundary (%s store)', (_, openStores) => {
  const opened: Stores[] = [];
  const runtimes: Runtime[] = [];
  const backgroundErrors: unknown[] = [];
  afterEach(async () => {
    await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
    await Promise.all(opened.splice(0).map((stores) => stores.close()));
    expect(backgroundErrors.splice(0)).toEqual([]);
  });
  async function runtimeOf(options: Omit<RuntimeOptions, 'stores'>): Promise<Runtime> {
    const stores = await openStores();
    opened.push(stores);
    const runtime = createRuntime({ stores, onError: (error) => backgroundErrors.push(error), ...options });
    runtimes.push(runtime);
    return runtime;
  }

  test('15.4: sleep(1.5) as the first call and after a step, and a 10.5 ms signal timeout, complete with whole-ms timers', async () => {
    const workflow = defineWorkflow({
      name: 'fractions',
      input: z.object({ stepFirst: z.boolean() }),
      signals: { go: z.string() },
      async run(ctx, { stepFirst }) {
        if (stepFirst) await ctx.step('before', () => 'ok');
        await ctx.sleep('nap', 1.5);
        return (await ctx.waitForSignal<string>('go', { timeoutMs: 10.5 })) ?? 'timed out';
      },
    });
    const runtime = await runtimeOf({ workflows: [workflow] });
    for (const stepFirst of [false, true]) {
      const id = `fraction-${stepFirst}`;
      const handle = await runtime.start(workflow, { stepFirst }, { executionId: id });
      expect(await handle.result()).toBe('timed out');
      const log = await runtime.history(id);
      const timers = log.filter((event) => event.type === 'TIMER_SCHEDULED');
      expect(timers).toHaveLength(2);
      for (const timer of timers) {
        const { dueAt } = timer.payload as TimerScheduledPayload;
        expect(Number.isInteger(dueAt)).toBe(true);
      }
    }
  });

  const calls: [string, (ctx: WorkflowContext, value: never) => Promise<unknown>, string][] = [
    ['ctx.sleep', (ctx, value) => ctx.sleep('nap', value), 'ctx.sleep("nap") is invalid: ms'],
    [
      'ctx.sleepUntil',
      (ctx, value) => ctx.sleepUntil('nap', value),
      'ctx.sleepUntil("nap") is invalid: until',
    ],
    [
      'ctx.waitForSignal timeoutMs',
      (ctx, value) => ctx.waitForSignal('go', { timeoutMs: value }),
      'ctx.waitForSignal("go") options is invalid: timeoutMs',
    ],
    [
      'ctx.step timeoutMs',
      (ctx, value) => ctx.step('s', () => 1, { timeoutMs: value }),
      'ctx.step("s") options is invalid: timeoutMs',
    ],
    [
      'ctx.step retry.initialMs',
      (ctx, value) => ctx.step('s', () => 1, { retry: { initialMs: value } }),
      'ctx.step("s") options is invalid: retry.initialMs',
    ],
    [
      'ctx.step retry.maxMs',
      (ctx, value) => ctx.step('s', () => 1, { retry: { maxMs: value } }),
      'ctx.step("s") options is invalid: retry.maxMs',
    ],
  ];

  test.each(calls)(
    '15.4: %s refuses Infinity, NaN, a string and a negative number, naming the field; nothing is recorded',
    async (name, call, message) => {
      for (const [what, value] of bad) {
        // sleepUntil takes instants, which may be negative (before 1970).
        if (name === 'ctx.sleepUntil' && what === 'a negative number') continue;
        const workflow = defineWorkflow({
          name: 'bad-duration',
          input: z.null(),
          signals: { go: z.string() },
          async run(ctx) {
            try {
              await call(ctx, value as never);
              return 'accepted';
            } catch (error) {
              return error instanceof InvalidInputError ? error.message : `other: ${String(error)}`;
            }
          },
        });
        const runtime = await runtimeOf({ workflows: [workflow] });
        const id = `bad-${name.replace(/\W/g, '-')}-${what.replace(/\W/g, '-')}`;
        const output = await (await runtime.start(workflow, null, { executionId: id })).result();
        expect(output, `${name} with ${what}`).toContain(message);
        // The refused call took no position and wrote nothing: the log is its start and its end.
        const types = (await runtime.history(id)).map((event) => event.type);
        expect(types, `${name} with ${what}`).toEqual(['EXECUTION_STARTED', 'EXECUTION_COMPLETED']);
      }
    },
  );

  test('15.4: createRuntime and Supervisor refuse bad lease TTLs and intervals, naming the option', async () => {
    const stores = await openStores();
    opened.push(stores);
    for (const [, value] of bad) {
      expect(() => createRuntime({ stores, workflows: [], lease: { ttlMs: value as number } })).toThrow(
        /createRuntime options is invalid: lease\.ttlMs: /,
      );
      expect(() => createRuntime({ stores, workflows: [], childRecheckMs: value as number })).toThrow(
        /createRuntime options is invalid: childRecheckMs: /,
      );
    }
    const runtime = createRuntime({ stores, workflows: [], lease: { ttlMs: 1_000 } });
    runtimes.push(runtime);
    for (const option of ['leaseTtlMs', 'tickIntervalMs', 'tickFailureDeadlineMs'] as const) {
      for (const [, value] of bad) {
        expect(() => new Supervisor({ runtime, stores, [option]: value as number })).toThrow(
          new RegExp(`Supervisor options is invalid: ${option}: `),
        );
      }
    }
    // A fractional TTL rounds up too.
    expect(createRuntime({ stores, workflows: [], lease: { ttlMs: 10.2 } }).leaseTtlMs).toBe(11);
  });
});
