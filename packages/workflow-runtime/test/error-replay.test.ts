/**
 * adr/0020: the body sees the same thing live and on replay. Every error a body can meet (a
 * step's failure and its cause chain, an error a step returns, a child's failure, an error in
 * a signal payload, the execution's own error) is observed on the first run and again on a
 * replay by a fresh runtime after a restart, and the two observations must be equal: the same
 * classes (`instanceof`), names, messages, fields, causes and JSON.
 */
import {
  type AnyWorkflow,
  ChildFailedError,
  defineWorkflow,
  type ErrorClass,
  ExecutionFailedError,
  NonRetryableError,
  type Runtime,
  type RuntimeOptions,
  SkeinError,
  StepFailedError,
  StepTimeoutError,
  type WorkflowContext,
} from '@skein/workflow-runtime';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { type Backing, backings, harness, until } from './support/stores.js';

const T0 = Date.UTC(2026, 0, 1);
const REPLAY_AFTER_MS = 60_000;

/** Registered by the workflows below (`defineWorkflow({ errors })`). */
class PaymentDeclined extends Error {
  override name = 'PaymentDeclined';
  constructor(
    message: string,
    readonly amount: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
  /** A prototype method: a revived instance has it too. */
  get retryable(): boolean {
    return this.amount < 100;
  }
}

/** Registered by the runtime (`createRuntime({ errors })`), not the workflow. */
class QuotaExceeded extends RangeError {
  override name = 'QuotaExceeded';
}

/** Never registered: it comes back as its nearest known ancestor, TypeError, both times. */
class UnknownToSkein extends TypeError {
  override name = 'UnknownToSkein';
  readonly detail = { retry: false };
}

/** Not plain data: an error holding one is recorded without that field. */
class Socket {
  readonly fd = 3;
}

const classes: [string, ErrorClass][] = [
  ['Error', Error],
  ['TypeError', TypeError],
  ['RangeError', RangeError],
  ['AggregateError', AggregateError],
  ['DOMException', DOMException],
  ['PaymentDeclined', PaymentDeclined],
  ['QuotaExceeded', QuotaExceeded],
  ['UnknownToSkein', UnknownToSkein],
  ['SkeinError', SkeinError],
  ['StepFailedError', StepFailedError],
  ['NonRetryableError', NonRetryableError],
  ['StepTimeoutError', StepTimeoutError],
  ['ChildFailedError', ChildFailedError],
];

/** What a body can tell about a value: its classes, its fields, its JSON; causes alike. */
function profile(value: unknown, depth = 0): unknown {
  if (!(value instanceof Error)) return { value };
  return {
    instanceOf: classes.filter(([, errorClass]) => value instanceof errorClass).map(([name]) => name),
    name: value.name,
    message: value.message,
    fields: { ...value },
    json: JSON.stringify(value),
    cause: depth < 6 && 'cause' in value ? profile(value.cause, depth + 1) : 'none',
    errors: value instanceof AggregateError ? value.errors.map((inner) => profile(inner, depth + 1)) : 'none',
    retryable: value instanceof PaymentDeclined ? value.retryable : 'n/a',
  };
}

/** A workflow that observes what `observe` yields (or throws), then sleeps so a later wake replays it. */
function observing(name: string, observe: (ctx: WorkflowContext) => Promise<unknown>, extra: object = {}) {
  const seen: unknown[] = [];
  const workflow = defineWorkflow({
    name,
    input: z.null(),
    errors: [PaymentDeclined],
    ...extra,
    async run(ctx) {
      const outcome = await observe(ctx).then(
        (value) => ({ returned: value }),
        (error: unknown) => ({ threw: error }),
      );
      seen.push(outcome);
      await ctx.sleep('replay-point', REPLAY_AFTER_MS);
      return 'done';
    },
  });
  return { workflow, seen };
}

describe.each(backings)('live and replay see the same errors (%s store)', (_, open) => {
  const h = harness(open);

  function runtimeOver(stores: Backing['stores'], workflows: AnyWorkflow[], now: number): Runtime {
    const options: RuntimeOptions = { stores, workflows, clock: () => now, errors: [QuotaExceeded] };
    return h.runtime(options);
  }

  /**
   * Run `workflow` live until it sleeps, then in a fresh runtime over reopened stores (a
   * restart) wake it, which replays the body from its log. Resolve the two observations.
   */
  async function liveThenReplay(
    seen: unknown[],
    workflows: AnyWorkflow[],
    drive?: (runtime: Runtime, executionId: string) => Promise<void>,
  ): Promise<{ live: unknown; replay: unknown }> {
    const backing = h.open();
    const workflow = workflows[0] as AnyWorkflow;
    const executionId = `${workflow.name}-1`;
    const first = runtimeOver(backing.stores, workflows, T0);
    const handle = await first.start(workflow, null, { executionId });
    await drive?.(first, executionId);
    await until(async () => (await handle.state())?.status === 'suspended' && seen.length === 1);
    await first.close();
    const restarted = runtimeOver(backing.reopen(), workflows, T0 + REPLAY_AFTER_MS);
    expect(await restarted.wake(executionId)).toMatchObject({ status: 'completed' });
    expect(seen).toHaveLength(2);
    return { live: seen[0], replay: seen[1] };
  }

  /** The observation on replay equals the live one, in profile and as values. */
  function expectSame({ live, replay }: { live: unknown; replay: unknown }): void {
    const settled = (outcome: unknown) => {
      const { returned, threw } = outcome as { returned?: unknown; threw?: unknown };
      return 'threw' in (outcome as object) ? { threw: profile(threw) } : { returned: profile(returned) };
    };
    expect(settled(replay)).toStrictEqual(settled(live));
    expect(replay).toStrictEqual(live);
  }

  const failingStep = (thrown: () => unknown) => (ctx: WorkflowContext) =>
    ctx.step('fail', () => {
      throw thrown();
    });

  const thrownKinds: [string, () => unknown, (cause: unknown) => void][] = [
    ['an Error', () => new Error('plain'), (cause) => expect(cause).toBeInstanceOf(Error)],
    ['a TypeError', () => new TypeError('bad type'), (cause) => expect(cause).toBeInstanceOf(TypeError)],
    [
      'an unregistered subclass (its nearest built-in ancestor, with its name and fields)',
      () => new UnknownToSkein('unknown'),
      (cause) => {
        expect(cause).toBeInstanceOf(TypeError);
        expect(cause).not.toBeInstanceOf(UnknownToSkein);
        expect(cause).toMatchObject({ name: 'UnknownToSkein', detail: { retry: false } });
      },
    ],
    [
      'a class the workflow registers',
      () => new PaymentDeclined('declined', 42),
      (cause) => {
        expect(cause).toBeInstanceOf(PaymentDeclined);
        expect(cause).toMatchObject({ name: 'PaymentDeclined', amount: 42, retryable: true });
      },
    ],
    [
      'a class the runtime registers',
      () => new QuotaExceeded('over quota'),
      (cause) => expect(cause).toBeInstanceOf(QuotaExceeded),
    ],
    [
      'NonRetryableError',
      () => new NonRetryableError('give up', { cause: new TypeError('root') }),
      (cause) => {
        expect(cause).toBeInstanceOf(NonRetryableError);
        expect((cause as Error).cause).toBeInstanceOf(TypeError);
      },
    ],
    [
      'a cause chain across classes',
      () =>
        new PaymentDeclined('outer', 500, {
          cause: new UnknownToSkein('middle', { cause: new QuotaExceeded('inner', { cause: 'a string' }) }),
        }),
      (cause) => {
        const middle = (cause as Error).cause as Error;
        expect(cause).toBeInstanceOf(PaymentDeclined);
        expect(middle).toBeInstanceOf(TypeError);
        expect(middle.cause).toBeInstanceOf(QuotaExceeded);
        expect((middle.cause as Error).cause).toBe('a string');
      },
    ],
    [
      'an AggregateError',
      () => new AggregateError([new PaymentDeclined('one', 1), new TypeError('two')], 'both'),
      (cause) => {
        expect(cause).toBeInstanceOf(AggregateError);
        expect((cause as AggregateError).errors[0]).toBeInstanceOf(PaymentDeclined);
      },
    ],
    [
      'a DOMException (an aborted fetch)',
      () => new DOMException('The operation was aborted', 'AbortError'),
      (cause) => {
        expect(cause).toBeInstanceOf(DOMException);
        expect((cause as DOMException).name).toBe('AbortError');
      },
    ],
    [
      'an error with a field the codec refuses (kept without that field)',
      () => Object.assign(new TypeError('socket hang up'), { code: 'ECONNRESET', socket: new Socket() }),
      (cause) => {
        expect(cause).toBeInstanceOf(TypeError);
        expect(cause).toMatchObject({ name: 'TypeError', code: 'ECONNRESET' });
        expect(cause).not.toHaveProperty('socket');
      },
    ],
    ['a string', () => 'just text', (cause) => expect(cause).toBe('just text')],
    ['a number', () => 42, (cause) => expect(cause).toBe(42)],
    ['undefined', () => undefined, (cause) => expect(cause).toBeUndefined()],
    [
      'a plain object',
      () => ({ code: 7, at: new Date(T0) }),
      (cause) => expect(cause).toEqual({ code: 7, at: new Date(T0) }),
    ],
    [
      'an object the codec refuses (its text)',
      () => new URL('https://example.com/x'),
      (cause) => expect(cause).toBe('https://example.com/x'),
    ],
  ];

  test.each(thrownKinds)(
    'a step that throws %s: StepFailedError and its cause are the same',
    async (kind, thrown, check) => {
      const { workflow, seen } = observing(
        `throws-${thrownKinds.findIndex(([k]) => k === kind)}`,
        failingStep(thrown),
      );
      const observed = await liveThenReplay(seen, [workflow]);
      expectSame(observed);
      const { threw } = observed.live as { threw: StepFailedError };
      expect(threw).toBeInstanceOf(StepFailedError);
      check(threw.cause);
    },
  );

  test('StepTimeoutError of a step past its timeoutMs is the same', async () => {
    const { workflow, seen } = observing('times-out', (ctx) =>
      ctx.step(
        'slow',
        ({ signal }) => new Promise((resolve) => signal.addEventListener('abort', () => resolve('late'))),
        { timeoutMs: 5 },
      ),
    );
    const observed = await liveThenReplay(seen, [workflow]);
    expectSame(observed);
    expect((observed.live as { threw: StepFailedError }).threw.cause).toBeInstanceOf(StepTimeoutError);
  });

  test.each([
    ['a TypeError', () => new TypeError('as data'), TypeError],
    ['a registered class', () => new PaymentDeclined('as data', 7), PaymentDeclined],
    ['an unregistered subclass', () => new UnknownToSkein('as data'), TypeError],
  ] as const)('a step that returns %s: the same value', async (_kind, make, expected) => {
    const { workflow, seen } = observing(`returns-${expected.name}-${_kind.length}`, (ctx) =>
      ctx.step('make', () => ({ error: make(), bytes: new Uint8Array([1, 2, 3]) })),
    );
    const observed = await liveThenReplay(seen, [workflow]);
    expectSame(observed);
    const { returned } = observed.live as { returned: { error: Error } };
    expect(returned.error).toBeInstanceOf(expected);
  });

  test("a child's failure: ChildFailedError and the child's error are the same", async () => {
    const child = defineWorkflow({
      name: 'failing-child',
      input: z.null(),
      errors: [PaymentDeclined],
      run: async () => {
        throw new PaymentDeclined('child declined', 900, { cause: new UnknownToSkein('deeper') });
      },
    });
    const { workflow, seen } = observing('parent', (ctx) =>
      ctx.child(child, null, { executionId: 'the-child' }),
    );
    const observed = await liveThenReplay(seen, [workflow, child]);
    expectSame(observed);
    const { threw } = observed.live as { threw: ChildFailedError };
    expect(threw).toBeInstanceOf(ChildFailedError);
    expect(threw.cause).toBeInstanceOf(PaymentDeclined);
  });

  test('an error inside a signal payload is the same', async () => {
    const { workflow, seen } = observing('signalled', (ctx) => ctx.waitForSignal('evidence'), {
      signals: { evidence: z.object({ error: z.instanceof(Error) }) },
    });
    const observed = await liveThenReplay(seen, [workflow], async (runtime, executionId) => {
      await until(async () => (await runtime.loadState(executionId))?.status === 'suspended');
      await runtime.signal(executionId, 'evidence', { error: new PaymentDeclined('by signal', 3) });
    });
    expectSame(observed);
    expect((observed.live as { returned: { error: Error } }).returned.error).toBeInstanceOf(PaymentDeclined);
  });

  test("the execution's own error: result() rejects alike before and after a restart, and serialises", async () => {
    const backing = h.open();
    const failing = defineWorkflow({
      name: 'fails',
      input: z.null(),
      errors: [PaymentDeclined],
      run: async () => {
        throw new PaymentDeclined('no funds', 120, { cause: new TypeError('card expired') });
      },
    });
    const first = runtimeOver(backing.stores, [failing], T0);
    const live = await (await first.start(failing, null, { executionId: 'fails-1' }))
      .result()
      .catch((e) => e);
    await first.close();
    const restarted = runtimeOver(backing.reopen(), [failing], T0);
    const later = await restarted.result('fails-1').catch((e: unknown) => e);
    expect(live).toBeInstanceOf(ExecutionFailedError);
    expect(profile(later)).toStrictEqual(profile(live));
    expect((later as ExecutionFailedError).cause).toBeInstanceOf(PaymentDeclined);
    expect(JSON.parse(JSON.stringify(later))).toEqual({
      code: 'EXECUTION_FAILED',
      name: 'ExecutionFailedError',
      message: 'execution "fails-1" ended failed: no funds',
      executionId: 'fails-1',
      cause: {
        name: 'PaymentDeclined',
        message: 'no funds',
        cause: { name: 'TypeError', message: 'card expired' },
      },
    });
  });

  test('property: whatever a step throws, the replay sees what the first run saw', async () => {
    const thrown = fc.oneof(
      fc.constantFrom<() => unknown>(
        () => new Error('e'),
        () => new TypeError('t'),
        () => new PaymentDeclined('p', 5),
        () => new QuotaExceeded('q'),
        () => new UnknownToSkein('u'),
        () => new NonRetryableError('n'),
      ),
      fc.jsonValue().map((value) => () => value),
    );
    const chain = fc.array(thrown, { minLength: 1, maxLength: 3 }).map((makers) => () => {
      // Each error's cause is the next thrown value.
      let cause: unknown;
      for (const make of [...makers].reverse()) {
        const value = make();
        if (value instanceof Error && cause !== undefined)
          Object.defineProperty(value, 'cause', { value: cause, configurable: true, writable: true });
        cause = value;
      }
      return cause;
    });
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(chain, async (make) => {
        runs += 1;
        const { workflow, seen } = observing(`property-${runs}`, failingStep(make));
        expectSame(await liveThenReplay(seen, [workflow]));
      }),
      { numRuns: 25 },
    );
  });
});
