/**
 * Issue 25.6 and 25.7 through the runtime (adr/0004): a step whose output cannot be recorded
 * fails at once, without retry, whatever made encoding fail, with StepFailedError caused by a
 * SerializationError naming the path; an input or signal that cannot be recorded is refused
 * with a clear error before anything is written.
 */
import {
  defineWorkflow,
  type Envelope,
  InvalidInputError,
  SerializationError,
  StepFailedError,
} from '@skein/workflow-runtime';
import { MAX_DEPTH } from '@skein/workflow-runtime/internal';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { backings, harness, types } from './support/stores.js';

function nested(levels: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < levels; i++) value = [value];
  return value;
}

const getterBoom = new Error('getter boom');

const unrecordable: [string, () => unknown, RegExp, unknown][] = [
  [
    'a throwing getter',
    () => ({
      get total(): number {
        throw getterBoom;
      },
    }),
    /\$\.output\.total.*reading it threw Error: getter boom/,
    getterBoom,
  ],
  ['~1,430 levels of nesting', () => nested(1_430), /nested deeper than 500 levels/, undefined],
  [
    'an array whose toJSON returns a BigInt',
    () => Object.assign([1, 2], { toJSON: () => 3n }),
    /\$\.output.*toJSON/,
    undefined,
  ],
  [
    'an array with a toJSON substitute',
    () => Object.assign(['a'], { toJSON: () => 'substitute' }),
    /\$\.output.*toJSON/,
    undefined,
  ],
];

describe.each(backings)('unrecordable values (%s store)', (_, open) => {
  const h = harness(open);

  test.each(unrecordable)(
    '25.6/25.7: a step returning %s fails at once, caused by a SerializationError at its path',
    async (_kind, produce, message, cause) => {
      const { stores } = h.open();
      let attempts = 0;
      const workflow = defineWorkflow({
        name: 'produces',
        input: z.null(),
        async run(ctx) {
          try {
            await ctx.step(
              'produce',
              () => {
                attempts += 1;
                return produce();
              },
              { retry: { maxAttempts: 5, initialMs: 1 } },
            );
            return 'not reached';
          } catch (error) {
            return error;
          }
        },
      });
      const runtime = h.runtime({ stores, workflows: [workflow] });
      const failure = await (await runtime.start(workflow, null, { executionId: 'produces' })).result();
      expect(attempts).toBe(1);
      expect(failure).toBeInstanceOf(StepFailedError);
      const serialization = (failure as StepFailedError).cause as SerializationError;
      expect(serialization).toBeInstanceOf(SerializationError);
      expect(serialization.message).toMatch(message);
      if (cause !== undefined) expect((serialization.cause as Error).message).toBe((cause as Error).message);
      const log = await runtime.history('produces');
      expect(types(log)).toEqual(['EXECUTION_STARTED', 'STEP_STARTED', 'STEP_FAILED', 'EXECUTION_COMPLETED']);
      const failed = log[2] as Envelope<'STEP_FAILED'>;
      expect(failed.payload.retryAt).toBeUndefined();
      expect(failed.payload.error).toBeInstanceOf(SerializationError);
    },
  );

  test('25.6: an input that cannot be recorded is refused with SerializationError or InvalidInputError, nothing written', async () => {
    const { stores } = h.open();
    const loose = defineWorkflow({ name: 'loose', input: z.unknown(), run: async () => 'ran' });
    const strict = defineWorkflow({
      name: 'strict',
      input: z.object({ total: z.number() }),
      run: async () => 'ran',
    });
    const runtime = h.runtime({ stores, workflows: [loose, strict] });
    const deep = runtime.start(loose, nested(1_430), { executionId: 'deep' });
    await expect(deep).rejects.toThrow(SerializationError);
    await expect(deep).rejects.toThrow(/nested deeper than 500 levels/);
    const getter = {
      get total(): number {
        throw getterBoom;
      },
    };
    await expect(runtime.start(loose, getter, { executionId: 'getter-loose' })).rejects.toThrow(
      /\$\.input\.total.*getter boom/,
    );
    const refused = await runtime
      .start(strict, getter, { executionId: 'getter-strict' })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(InvalidInputError);
    expect((refused as InvalidInputError).issues).toEqual([
      { path: 'input', message: 'reading it threw Error: getter boom' },
    ]);
    expect((refused as Error).cause).toBe(getterBoom);
    for (const id of ['deep', 'getter-loose', 'getter-strict']) expect(await runtime.history(id)).toEqual([]);
  });

  test('25.6: a signal payload that cannot be recorded is refused before it reaches the inbox', async () => {
    const { stores } = h.open();
    const waits = defineWorkflow({
      name: 'waits',
      input: z.null(),
      signals: { data: z.unknown() },
      run: async (ctx) => ctx.waitForSignal('data'),
    });
    const runtime = h.runtime({ stores, workflows: [waits] });
    await runtime.start(waits, null, { executionId: 'waits' });
    await expect(runtime.signal('waits', 'data', nested(1_430))).rejects.toThrow(SerializationError);
    await expect(runtime.signal('waits', 'data', nested(MAX_DEPTH + 1))).rejects.toThrow(
      /nested deeper than 500/,
    );
    expect(await stores.signals.pending('waits')).toEqual([]);
    // MAX_DEPTH levels fit, in the inbox and once received, one level into SIGNAL_RECEIVED.
    await runtime.signal('waits', 'data', nested(MAX_DEPTH));
    expect(await runtime.handle('waits').result()).toStrictEqual(nested(MAX_DEPTH));
  });

  const unprintable: [string, () => unknown][] = [
    ['a null-prototype object with a method', () => Object.assign(Object.create(null) as object, { m() {} })],
    [
      'a revoked proxy',
      () => {
        const { proxy, revoke } = Proxy.revocable({}, {});
        revoke();
        return proxy;
      },
    ],
    [
      'an object whose toString throws',
      () => ({
        toString(): string {
          throw new Error('no text');
        },
        f() {},
      }),
    ],
  ];

  test.each(unprintable)(
    'whatever is thrown, even %s, the failure is recorded (body and step)',
    async (_kind, make) => {
      const { stores } = h.open();
      const body = defineWorkflow({
        name: 'throws-in-body',
        input: z.null(),
        run: async () => {
          throw make();
        },
      });
      const step = defineWorkflow({
        name: 'throws-in-step',
        input: z.null(),
        run: (ctx) =>
          ctx.step('s', () => {
            throw make();
          }),
      });
      const runtime = h.runtime({ stores, workflows: [body, step] });
      for (const workflow of [body, step]) {
        const handle = await runtime.start(workflow, null, { executionId: workflow.name });
        const failure = await handle.result().catch((error: unknown) => error);
        expect((failure as Error).name).toBe('ExecutionFailedError');
        const state = await runtime.loadState(workflow.name);
        expect(state?.status).toBe('failed');
        const recorded = workflow === body ? state?.error : (state?.error as Error | undefined)?.cause;
        expect(recorded).toMatch(/a thrown value that can be neither recorded nor printed/);
      }
      expect(types(await runtime.history('throws-in-step'))).toEqual([
        'EXECUTION_STARTED',
        'STEP_STARTED',
        'STEP_FAILED',
        'EXECUTION_FAILED',
      ]);
    },
  );

  test('a failure whose error is over the payload limit is recorded cut down, so the step still fails', async () => {
    const { stores } = h.open({ maxPayloadBytes: 2_000 });
    const huge = defineWorkflow({
      name: 'huge-error',
      input: z.null(),
      async run(ctx) {
        try {
          await ctx.step('boom', () => {
            throw Object.assign(new TypeError('x'.repeat(10_000)), {
              code: 'E_HUGE',
              blob: 'y'.repeat(10_000),
            });
          });
          return 'not reached';
        } catch (error) {
          const cause = (error as StepFailedError).cause as TypeError & { code: string };
          return {
            failed: error instanceof StepFailedError,
            typeError: cause instanceof TypeError,
            code: cause.code,
            message: cause.message,
          };
        }
      },
    });
    const runtime = h.runtime({ stores, workflows: [huge], maxPayloadBytes: 2_000 });
    const seen = await (await runtime.start(huge, null, { executionId: 'huge' })).result();
    expect(seen).toEqual({
      failed: true,
      typeError: true,
      code: 'E_HUGE',
      message: `${'x'.repeat(250)}… (cut to fit the log)`,
    });
    const log = await runtime.history('huge');
    expect(types(log)).toEqual(['EXECUTION_STARTED', 'STEP_STARTED', 'STEP_FAILED', 'EXECUTION_COMPLETED']);
    expect(((log[2] as Envelope<'STEP_FAILED'>).payload.error as Error).message).toBe(
      `${'x'.repeat(250)}… (cut to fit the log)`,
    );
  });
});
