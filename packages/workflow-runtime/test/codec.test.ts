/**
 * docs/architecture.md#the-log: one codec for every payload, JSON plus Date, BigInt, Map, Set,
 * undefined, Error, Uint8Array and Buffer; anything else is refused with a SerializationError
 * naming where it is.
 */
import { SerializationError } from '@skein/workflow-runtime';
import { createCodec, decode, defaultCodec, encode } from '@skein/workflow-runtime/internal';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';

// Not 'constructor': vitest's strict equality reads it to compare types.
const key = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('$t', 'v', '__proto__', 'toString'));

function makeError(fields: {
  name: string;
  message: string;
  extra: Record<string, unknown>;
  cause?: unknown;
}): Error {
  const error =
    'cause' in fields ? new Error(fields.message, { cause: fields.cause }) : new Error(fields.message);
  // As an Error subclass declares it: on the instance but not enumerable.
  Object.defineProperty(error, 'name', { value: fields.name, writable: true, configurable: true });
  for (const [field, value] of Object.entries(fields.extra)) {
    Object.defineProperty(error, field, { value, enumerable: true, writable: true, configurable: true });
  }
  return error;
}

/** Every kind of value the codec takes, nested. */
const { value } = fc.letrec((tie) => ({
  leaf: fc.oneof(
    fc.constant(null),
    fc.constant(undefined),
    fc.boolean(),
    fc.double(),
    fc.integer(),
    fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0),
    fc.string(),
    fc.bigInt(),
    fc.date({ noInvalidDate: false }),
    fc.uint8Array({ maxLength: 40 }),
    fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes)),
    // A view into a larger buffer: only the view's own bytes are recorded.
    fc
      .tuple(fc.uint8Array({ minLength: 8, maxLength: 40 }), fc.nat(3), fc.nat(3))
      .map(([bytes, start, end]) => bytes.subarray(start, bytes.length - end)),
  ),
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    tie('leaf'),
    tie('array'),
    tie('object'),
    tie('map'),
    tie('set'),
    tie('error'),
    tie('builtInError'),
  ),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(key, tie('value'), { maxKeys: 4, noNullPrototype: true }),
  map: fc.array(fc.tuple(tie('value'), tie('value')), { maxLength: 3 }).map((entries) => new Map(entries)),
  set: fc.array(tie('value'), { maxLength: 3 }).map((items) => new Set(items)),
  error: fc
    .record(
      {
        name: fc.constantFrom('Error', 'TypeError', 'PaymentDeclined'),
        message: fc.string(),
        extra: fc.dictionary(fc.constantFrom('code', 'status', 'detail', '$t'), tie('value'), {
          maxKeys: 2,
          noNullPrototype: true,
        }),
        cause: tie('value'),
      },
      { requiredKeys: ['name', 'message', 'extra'] },
    )
    .map(makeError),
  builtInError: fc
    .record({
      make: fc.constantFrom(Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError),
      message: fc.string(),
      cause: fc.option(tie('value'), { nil: undefined }),
    })
    .map(({ make, message, cause }) =>
      cause === undefined ? new make(message) : new make(message, { cause }),
    ),
}));

describe('codec round-trip', () => {
  test('decode(encode(x)) is x for JSON plus Date, BigInt, Map, Set, undefined, non-finite numbers, -0, Error, Uint8Array and Buffer', () => {
    fc.assert(
      fc.property(value, (original) => {
        const text = encode(original);
        expect(typeof text).toBe('string');
        expect(decode(text)).toStrictEqual(original);
      }),
      { numRuns: 500 },
    );
  });

  test('the encoding is plain JSON text, stable under a second round-trip', () => {
    fc.assert(
      fc.property(value, (original) => {
        const text = encode(original);
        expect(() => JSON.parse(text)).not.toThrow();
        expect(encode(decode(text))).toBe(text);
      }),
      { numRuns: 200 },
    );
  });

  test("record gives encode's text and, as the view, what decoding it gives; plain JSON is its own view; an undefined field is left out", () => {
    fc.assert(
      fc.property(value, (original) => {
        // As an event payload: the value in a field, next to fields the runtime sets.
        const { text, view } = defaultCodec.record({ position: 1, output: original });
        const fields = Object.entries(view as object).filter(([, field]) => field !== undefined);
        expect(decode(text)).toStrictEqual(Object.fromEntries(fields));
        if (original !== undefined) expect(text).toBe(encode({ position: 1, output: original }));
      }),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.jsonValue(), (data) => {
        const { view } = createCodec().record({ output: data });
        if (!JSON.stringify(data).includes('"$t":') && !hasNegativeZero(data))
          expect((view as { output: unknown }).output).toBe(data);
      }),
    );
  });

  test('special values that JSON loses survive: undefined at the top, in objects and arrays; NaN, ±Infinity, -0', () => {
    expect(decode(encode(undefined))).toBeUndefined();
    const roundTripped = decode<{ a: unknown; list: unknown[] }>(
      encode({ a: undefined, list: [undefined, 1] }),
    );
    expect(Object.hasOwn(roundTripped, 'a')).toBe(true);
    expect(roundTripped.list).toHaveLength(2);
    expect(Number.isNaN(decode(encode(Number.NaN)))).toBe(true);
    expect(decode(encode(Number.POSITIVE_INFINITY))).toBe(Number.POSITIVE_INFINITY);
    expect(decode(encode(Number.NEGATIVE_INFINITY))).toBe(Number.NEGATIVE_INFINITY);
    expect(Object.is(decode(encode(-0)), -0)).toBe(true);
  });

  test('bytes round-trip as their own type: a Uint8Array as a Uint8Array, a Buffer as a Buffer', () => {
    const bytes = new Uint8Array([0, 1, 254, 255]);
    const back = decode<Uint8Array>(encode(bytes));
    expect(Object.getPrototypeOf(back)).toBe(Uint8Array.prototype);
    expect([...back]).toEqual([0, 1, 254, 255]);
    // Its own memory, not a view into a shared pool.
    expect(back.byteOffset).toBe(0);
    expect(back.buffer.byteLength).toBe(4);
    const buffer = Buffer.from('héllo', 'utf8');
    const again = decode<{ buffer: Buffer }>(encode({ buffer }));
    expect(Buffer.isBuffer(again.buffer)).toBe(true);
    expect(again.buffer.toString('utf8')).toBe('héllo');
    // A view records only its bytes, whatever the buffer around it holds.
    const pooled = Buffer.from('abcdef').subarray(2, 4);
    expect(encode(pooled)).toBe('{"$t":"B","v":"Y2Q="}');
    expect(decode<Buffer>(encode(pooled)).toString()).toBe('cd');
  });

  test('other binary views are refused by name; bytes count as base64 text against the payload limit', () => {
    expect(() => encode(new Int16Array(2))).toThrow(/instance of Int16Array is not plain data/);
    expect(() => encode(new Uint8ClampedArray(2))).toThrow(/Uint8ClampedArray/);
    expect(() => encode(new ArrayBuffer(2))).toThrow(/ArrayBuffer/);
    for (const size of [0, 1, 2, 3, 1_000, 786_432]) {
      const text = encode(new Uint8Array(size));
      expect(Buffer.byteLength(text)).toBe(Math.ceil(size / 3) * 4 + '{"$t":"y","v":""}'.length);
    }
  });

  test('Dates keep their time, and an invalid Date stays an invalid Date', () => {
    const when = new Date('2026-11-29T13:00:00.123Z');
    const back = decode<Date>(encode(when));
    expect(back).toBeInstanceOf(Date);
    expect(back.getTime()).toBe(when.getTime());
    const invalid = decode<Date>(encode(new Date(Number.NaN)));
    expect(invalid).toBeInstanceOf(Date);
    expect(Number.isNaN(invalid.getTime())).toBe(true);
  });

  test('Errors keep name, message, custom fields and cause (nested)', () => {
    const root = new Error('disk full');
    const error = new Error('charge failed', { cause: root }) as Error & { code?: string; amount?: bigint };
    error.name = 'PaymentError';
    error.code = 'E_CHARGE';
    error.amount = 1999n;
    const back = decode<Error & { code: string; amount: bigint }>(encode(error));
    expect(back).toBeInstanceOf(Error);
    expect(back.name).toBe('PaymentError');
    expect(back.message).toBe('charge failed');
    expect(back.code).toBe('E_CHARGE');
    expect(back.amount).toBe(1999n);
    expect(back.cause).toBeInstanceOf(Error);
    expect((back.cause as Error).message).toBe('disk full');
  });

  test('an object with a "$t" key is data, never mistaken for a tag', () => {
    const lookalikes = [
      { $t: 'd', v: '2020-01-01T00:00:00.000Z' },
      { $t: 'u' },
      { $t: 'b', v: '1' },
      { $t: 'nope' },
    ];
    for (const lookalike of lookalikes) {
      const back = decode(encode(lookalike));
      expect(back).toStrictEqual(lookalike);
    }
    fc.assert(
      fc.property(fc.string(), value, (tag, v) => {
        const lookalike = { $t: tag, v };
        expect(decode(encode(lookalike))).toStrictEqual(lookalike);
      }),
    );
  });

  test('a "__proto__" key is kept as data and never becomes the prototype', () => {
    const original = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
    const back = decode<Record<string, unknown>>(encode(original));
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
    expect(Object.hasOwn(back, '__proto__')).toBe(true);
    expect(back).toStrictEqual(original);
    expect((back as { polluted?: unknown }).polluted).toBeUndefined();
  });

  test("plain JSON data encodes as JSON.stringify's text; a $t key or a value JSON loses takes the tagged form", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (data) => {
        const tagged = JSON.stringify(data).includes('"$t":') || hasNegativeZero(data);
        if (!tagged) expect(encode(data)).toBe(JSON.stringify(data));
        expect(decode(encode(data))).toStrictEqual(data);
      }),
      { numRuns: 500 },
    );
    expect(encode({ a: [1, 'x', null, { b: true }] })).toBe('{"a":[1,"x",null,{"b":true}]}');
    expect(encode({ a: { $t: 1 } })).toBe('{"a":{"$t":"o","v":{"$t":1}}}');
    expect(encode([1, undefined])).toBe('[1,{"$t":"u"}]');
    expect(encode({ n: -0 })).toBe('{"n":{"$t":"n","v":"-0"}}');
    // A toJSON that JSON.stringify would call is a function: refused, not called.
    expect(() => encode({ toJSON: () => 'x' })).toThrow(SerializationError);
    // Nesting past the plain-data check's depth is encoded the same way.
    let deep: unknown = 'leaf';
    for (let i = 0; i < 100; i++) deep = { d: [deep] };
    expect(decode(encode(deep))).toStrictEqual(deep);
  });

  test('a value shared twice (not a cycle) is encoded twice', () => {
    const shared = { n: 1 };
    expect(decode(encode({ a: shared, b: [shared] }))).toStrictEqual({ a: { n: 1 }, b: [{ n: 1 }] });
  });
});

function hasNegativeZero(data: unknown): boolean {
  if (Object.is(data, -0)) return true;
  return typeof data === 'object' && data !== null && Object.values(data).some(hasNegativeZero);
}

/** A path into nested data: object keys and array indexes. */
const segment = fc.oneof(
  fc.stringMatching(/^[a-z][a-z0-9]{0,5}$/).map((k) => ({ key: k })),
  fc.nat({ max: 3 }).map((index) => ({ index })),
);

function placeAt(path: readonly ({ key: string } | { index: number })[], leaf: unknown): unknown {
  return path.reduceRight<unknown>((inner, step) => {
    if ('key' in step) return { before: 1, [step.key]: inner };
    const array: unknown[] = Array.from({ length: step.index }, (_, i) => i);
    array.push(inner);
    return array;
  }, leaf);
}

function pathText(path: readonly ({ key: string } | { index: number })[]): string {
  return `$${path.map((step) => ('key' in step ? `.${step.key}` : `[${step.index}]`)).join('')}`;
}

function refusal(thunk: () => unknown): SerializationError {
  try {
    thunk();
  } catch (error) {
    expect(error).toBeInstanceOf(SerializationError);
    return error as SerializationError;
  }
  throw new Error('expected the codec to refuse the value');
}

describe('codec refusals name the path', () => {
  class Point {
    x = 1;
  }
  const unserializable: [string, () => unknown, RegExp][] = [
    ['a function', () => () => 1, /function/],
    ['a symbol', () => Symbol('s'), /symbol/],
    ['a class instance', () => new Point(), /Point/],
  ];

  test.each(unserializable)('%s anywhere is refused with its path in the message', (_, make, reason) => {
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 5 }), (path) => {
        const error = refusal(() => encode(placeAt(path, make())));
        expect(error.path).toBe(pathText(path));
        expect(error.message).toContain(pathText(path));
        expect(error.message).toMatch(reason);
      }),
    );
  });

  test('the path example of the brief: $.a.b[2]', () => {
    const error = refusal(() => encode({ a: { b: [1, 2, () => 3] } }));
    expect(error.path).toBe('$.a.b[2]');
    expect(error.message).toContain('$.a.b[2]');
  });

  test('a cycle is refused at the reference that closes it', () => {
    const node: { name: string; child: { parent?: unknown } } = { name: 'n', child: {} };
    node.child.parent = node;
    const error = refusal(() => encode(node));
    expect(error.path).toBe('$.child.parent');
    expect(error.message).toMatch(/cycle/);
  });

  test('bad values inside Map, Set and Error are refused too', () => {
    expect(refusal(() => encode(new Map([['k', () => 1]]))).path).toContain('$');
    expect(refusal(() => encode(new Set([Symbol('x')]))).message).toMatch(/symbol/);
    const error = new Error('e') as Error & { where?: unknown };
    error.where = new Point();
    expect(refusal(() => encode({ e: error })).path).toBe('$.e.where');
  });
});
