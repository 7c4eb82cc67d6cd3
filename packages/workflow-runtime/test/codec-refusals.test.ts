/**
 * Issue 25.6 and 25.7: every failure to encode is a SerializationError naming the path, with
 * what was thrown as `cause`, and nothing is recorded as a substitute for the value itself.
 */
import { SerializationError } from '@skein/workflow-runtime';
import { decode, encode, MAX_DEPTH } from '@skein/workflow-runtime/internal';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';

function refusal(thunk: () => unknown): SerializationError {
  try {
    thunk();
  } catch (error) {
    expect(error).toBeInstanceOf(SerializationError);
    return error as SerializationError;
  }
  throw new Error('expected the codec to refuse the value');
}

function nested(levels: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < levels; i++) value = i % 2 === 0 ? [value] : { down: value };
  return value;
}

describe('25.6: a failure to encode is a SerializationError, never the raw error', () => {
  test('a throwing getter is refused at its own path, the thrown error as cause', () => {
    const boom = new Error('getter boom');
    const order = {
      id: 1,
      lines: [
        {
          get price(): number {
            throw boom;
          },
        },
      ],
    };
    const error = refusal(() => encode(order));
    expect(error.path).toBe('$.lines[0].price');
    expect(error.message).toMatch(/\$\.lines\[0\]\.price.*reading it threw Error: getter boom/);
    expect(error.cause).toBe(boom);
  });

  test('a getter that throws a non-error, and one whose thrown value cannot even be printed', () => {
    const unprintable = Object.create(null) as object;
    expect(
      refusal(() =>
        encode({
          get a(): never {
            throw 'text';
          },
        }),
      ).message,
    ).toMatch(/threw text/);
    const error = refusal(() =>
      encode({
        get a(): never {
          throw unprintable;
        },
      }),
    );
    expect(error.message).toMatch(/cannot be printed/);
    expect(error.cause).toBe(unprintable);
  });

  test(`nesting deeper than MAX_DEPTH (${MAX_DEPTH}) is refused, not a RangeError; up to it round-trips`, () => {
    expect(decode(encode(nested(MAX_DEPTH)))).toStrictEqual(nested(MAX_DEPTH));
    const error = refusal(() => encode(nested(MAX_DEPTH + 1)));
    expect(error.message).toMatch(/nested deeper than 500 levels/);
    // The case of the issue: ~1,430 levels used to overflow the stack.
    expect(refusal(() => encode(nested(1_430))).message).toMatch(/nested deeper/);
    expect(refusal(() => encode(nested(100_000))).message).toMatch(/nested deeper/);
  });

  test('a revoked proxy and a proxy whose traps throw are refused at their path', () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    const revoked = refusal(() => encode({ a: [1, proxy] }));
    expect(revoked.path).toBe('$.a[1]');
    expect(revoked.cause).toBeInstanceOf(TypeError);
    const trap = new Error('ownKeys trap');
    const hostile = new Proxy(
      {},
      {
        ownKeys() {
          throw trap;
        },
      },
    );
    const error = refusal(() => encode({ b: hostile }));
    expect(error.path).toBe('$.b');
    expect(error.cause).toBe(trap);
  });

  test('property: whatever a getter throws, anywhere, encode throws a SerializationError at that path', () => {
    fc.assert(
      fc.property(
        fc.array(fc.stringMatching(/^[a-z]{1,4}$/), { maxLength: 4 }),
        fc.anything(),
        (keys, thrown) => {
          const leaf = {
            get bad(): never {
              throw thrown;
            },
          };
          const value = keys.reduceRight<unknown>((inner, key) => ({ [key]: inner }), leaf);
          const error = refusal(() => encode(value));
          expect(error.path).toBe(`$${keys.map((k) => `.${k}`).join('')}.bad`);
          expect(error.cause).toBe(thrown);
        },
      ),
    );
  });
});

describe('25.7: a toJSON method is refused wherever it is, never called', () => {
  test('an array with a toJSON method is refused (the first run would see the array, replay the substitute)', () => {
    let called = 0;
    const list = Object.assign([1, 2, 3], {
      toJSON: () => {
        called += 1;
        return 'substitute';
      },
    });
    const error = refusal(() => encode({ list }));
    expect(error.path).toBe('$.list');
    expect(error.message).toMatch(/toJSON/);
    expect(called).toBe(0);
  });

  test('a toJSON returning a BigInt (a TypeError inside JSON.stringify) is refused, not thrown raw', () => {
    const list = Object.assign([1], { toJSON: () => 10n });
    expect(refusal(() => encode(list)).message).toMatch(/toJSON/);
  });

  test('an array subclass with toJSON on its prototype, and a non-enumerable toJSON on a plain object', () => {
    class Tagged extends Array<number> {
      toJSON() {
        return 'tagged';
      }
    }
    expect(refusal(() => encode({ t: Tagged.from([1]) })).path).toBe('$.t');
    const hidden = Object.defineProperty({ a: 1 }, 'toJSON', { value: () => 'x', enumerable: false });
    expect(refusal(() => encode([hidden])).path).toBe('$[0]');
    expect(refusal(() => encode({ toJSON: () => 'x' })).message).toMatch(/toJSON/);
  });

  test('a plain array keeps taking the plain-JSON fast path, and a "toJSON" key holding data is data', () => {
    expect(encode([1, [2, { a: 'b' }]])).toBe(JSON.stringify([1, [2, { a: 'b' }]]));
    expect(decode(encode({ toJSON: 'just a string' }))).toStrictEqual({ toJSON: 'just a string' });
  });
});
