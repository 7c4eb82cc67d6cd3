/**
 * adr/0020, in the codec: a recorded error is revived as the first class of its chain the
 * reader knows (registered, Skein's, built-in), else a plain Error; and every error Skein
 * hands out serialises with JSON.stringify to `{ code?, name, message, cause? }` (issue 24.5).
 */
import {
  createRuntime,
  DuplicateWorkflowError,
  defineWorkflow,
  ErrorClassesByCode,
  ErrorCodes,
  InvalidErrorClassError,
  NonRetryableError,
  openMemoryStores,
  SkeinError,
  StepFailedError,
  serializeError,
} from '@skein/workflow-runtime';
import { createCodec, decode, encode } from '@skein/workflow-runtime/internal';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';

class PaymentDeclined extends Error {
  override name = 'PaymentDeclined';
  constructor(
    message: string,
    readonly amount: number,
  ) {
    super(message);
  }
  get large(): boolean {
    return this.amount > 100;
  }
}
class CardExpired extends PaymentDeclined {
  override name = 'CardExpired';
}
/** A Skein error of another package, as worker-runtime-http's are. */
class RemoteThing extends SkeinError {
  constructor() {
    super('REMOTE_THING', 'far away');
  }
}

describe('reviving recorded errors', () => {
  test('a registered class comes back as itself, without its constructor running, with its fields and getters', () => {
    const codec = createCodec({ errors: [PaymentDeclined] });
    const back = codec.decode<PaymentDeclined>(encode(new PaymentDeclined('no funds', 250)));
    expect(back).toBeInstanceOf(PaymentDeclined);
    expect(back).toMatchObject({ name: 'PaymentDeclined', message: 'no funds', amount: 250, large: true });
    expect(back.stack).toContain('PaymentDeclined: no funds');
  });

  test('an unregistered subclass comes back as its nearest known ancestor', () => {
    const codec = createCodec({ errors: [PaymentDeclined] });
    const back = codec.decode<Error>(encode(new CardExpired('expired', 5)));
    expect(back).toBeInstanceOf(PaymentDeclined);
    expect(back).not.toBeInstanceOf(CardExpired);
    expect(back.name).toBe('CardExpired');
    // Without the registration: plain Error, same name, message and fields.
    const plain = decode<Error>(encode(new CardExpired('expired', 5)));
    expect(Object.getPrototypeOf(plain)).toBe(Error.prototype);
    expect(plain).toMatchObject({ name: 'CardExpired', message: 'expired', amount: 5 });
  });

  test('built-ins come back as themselves: TypeError, RangeError, AggregateError with its errors, DOMException', () => {
    for (const make of [TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError]) {
      expect(decode(encode(new make('m')))).toBeInstanceOf(make);
    }
    const aggregate = decode<AggregateError>(encode(new AggregateError([new TypeError('a'), 'b'], 'both')));
    expect(aggregate).toBeInstanceOf(AggregateError);
    expect(aggregate.errors[0]).toBeInstanceOf(TypeError);
    expect(aggregate.errors[1]).toBe('b');
    const aborted = decode<DOMException>(encode(new DOMException('gone', 'AbortError')));
    expect(aborted).toBeInstanceOf(DOMException);
    expect([aborted.name, aborted.message, aborted.code]).toEqual(['AbortError', 'gone', 20]);
  });

  test('every Skein error class of this package comes back as itself, by its code', () => {
    for (const [code, errorClass] of Object.entries(ErrorClassesByCode)) {
      const original = Reflect.construct(Error, ['m'], errorClass) as Error;
      Object.assign(original, { code, name: errorClass.name });
      const back = decode<SkeinError>(encode(original));
      expect(back, code).toBeInstanceOf(errorClass);
      expect(back.code).toBe(code);
    }
    const failed = new StepFailedError('x', 'charge', 3, { cause: new NonRetryableError('stop') });
    const back = decode<StepFailedError>(encode(failed));
    expect(back).toBeInstanceOf(StepFailedError);
    expect(back).toMatchObject({ executionId: 'x', step: 'charge', attempts: 3, code: 'STEP_FAILED' });
    expect(back.cause).toBeInstanceOf(NonRetryableError);
  });

  test("another package's Skein error comes back as a SkeinError with its code, or as itself when registered", () => {
    const back = decode<SkeinError>(encode(new RemoteThing()));
    expect(back).toBeInstanceOf(SkeinError);
    expect(back.code).toBe('REMOTE_THING');
    expect(createCodec({ errors: [RemoteThing] }).decode(encode(new RemoteThing()))).toBeInstanceOf(
      RemoteThing,
    );
  });

  test('a record written before class chains were recorded decodes as before: a plain Error', () => {
    const back = decode<Error>('{"$t":"e","v":{"name":"TypeError","message":"old","code":"E1"}}');
    expect(Object.getPrototypeOf(back)).toBe(Error.prototype);
    expect(back).toMatchObject({ name: 'TypeError', message: 'old', code: 'E1' });
  });

  test('the recorded class chain stops at the first class every reader knows', () => {
    expect(encode(new Error('e'))).not.toContain('"c"');
    expect(encode(new TypeError('t'))).toContain('"c":["TypeError"]');
    expect(encode(new CardExpired('x', 1))).toContain('"c":["CardExpired","PaymentDeclined","Error"]');
    expect(encode(new StepFailedError('x', 's', 1))).toContain('"c":["StepFailedError"]');
  });
});

describe('registering error classes', () => {
  const noop = { input: z.null(), run: async () => null };

  test.each([
    ['not a class', () => 'PaymentDeclined', /not a class that extends Error/],
    ['a class that is not an error', () => class Point {}, /not a class that extends Error/],
    ['an anonymous class', () => (() => class extends Error {})(), /errors\[0\].*anonymous|not a class/],
    ['a built-in', () => TypeError, /TypeError.*built-in/],
    ['a class named like a Skein error', () => class StepFailedError extends Error {}, /Skein error class/],
  ])('%s is refused by defineWorkflow with InvalidErrorClassError', (_, make, message) => {
    const define = () => defineWorkflow({ name: 'w', ...noop, errors: [make() as never] });
    expect(define).toThrow(InvalidErrorClassError);
    expect(define).toThrow(message);
  });

  test('two different classes of one name are refused by createRuntime; the same class twice is fine', () => {
    const other = class PaymentDeclined extends Error {};
    const a = defineWorkflow({ name: 'a', ...noop, errors: [PaymentDeclined] });
    const b = defineWorkflow({ name: 'b', ...noop, errors: [other] });
    const stores = openMemoryStores();
    expect(() => createRuntime({ stores, workflows: [a, b] })).toThrow(
      /error class PaymentDeclined cannot be registered: createRuntime: two different classes/,
    );
    expect(() => createRuntime({ stores, workflows: [a], errors: [PaymentDeclined] })).not.toThrow();
    expect(() => createRuntime({ stores, workflows: [a], errors: 'x' as never })).toThrow(
      InvalidErrorClassError,
    );
  });

  test('15.6: a workflow name and version registered twice is a SkeinError with a code, not a TypeError', () => {
    const w = defineWorkflow({ name: 'twice', ...noop });
    let error: unknown;
    try {
      createRuntime({ stores: openMemoryStores(), workflows: [w, w] });
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(DuplicateWorkflowError);
    expect(error).toMatchObject({ code: ErrorCodes.DuplicateWorkflow, workflow: 'twice', version: 1 });
    expect((error as Error).message).toBe(
      'workflow "twice" version 1 is registered twice; each name and version may be registered once',
    );
  });
});

describe('24.5: errors survive JSON', () => {
  test('a Skein error serialises to { code, name, message, executionId, cause } with its cause chain', () => {
    const error = new StepFailedError('order-1', 'charge', 2, {
      cause: new PaymentDeclined('declined', 5),
    });
    expect(JSON.parse(JSON.stringify(error))).toEqual({
      code: 'STEP_FAILED',
      name: 'StepFailedError',
      message: 'execution "order-1": step "charge" failed after 2 attempts: declined',
      executionId: 'order-1',
      cause: { name: 'PaymentDeclined', message: 'declined' },
    });
  });

  test('a recorded error, whatever its class, serialises to its name, message, code and cause, not {}', () => {
    const node = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED', errno: -111 });
    const back = decode(encode(new TypeError('outer', { cause: node })));
    expect(JSON.stringify(new TypeError('live'))).toBe('{}');
    expect(JSON.parse(JSON.stringify(back))).toEqual({
      name: 'TypeError',
      message: 'outer',
      cause: { code: 'ECONNREFUSED', name: 'Error', message: 'connect ECONNREFUSED' },
    });
  });

  test('serializeError never throws: cycles, BigInts, unprintable values, deep chains', () => {
    const cyclic = new Error('loop');
    (cyclic as { cause?: unknown }).cause = cyclic;
    expect(serializeError(cyclic)).toEqual({ name: 'Error', message: 'loop', cause: '[cycle: Error]' });
    expect(serializeError(new Error('n', { cause: { big: 1n } }))).toEqual({
      name: 'Error',
      message: 'n',
      cause: '[object Object]',
    });
    expect(serializeError(10n)).toBe('10');
    const unprintable = Object.assign(Object.create(null) as object, { big: 1n });
    expect(serializeError(new Error('u', { cause: unprintable }))).toMatchObject({
      cause: expect.stringMatching(/cannot be printed/),
    });
    let deep: unknown = 'root';
    for (let i = 0; i < 100; i++) deep = new Error(`e${i}`, { cause: deep });
    expect(JSON.stringify(serializeError(deep))).toContain('cause chain deeper than 16');
  });
});
