/**
 * The one codec every payload goes through: JSON plus Date, BigInt, Map, Set, undefined,
 * Error, Uint8Array, Buffer and non-finite numbers. Anything else (functions, symbols, class
 * instances, cycles, a `toJSON` method, nesting past {@link MAX_DEPTH}) is refused with a
 * {@link SerializationError} naming the path, before anything is written; so is a value whose
 * reading throws (a getter, a revoked proxy), with what it threw as `cause`.
 *
 * Special values are written as `{"$t": tag, "v": value}`; a plain object that itself has a
 * `$t` key is wrapped as `{"$t": "o", "v": {...}}`, so user data can never be mistaken for a tag.
 * Errors are revived as their class where the reader knows it (see error-codec.ts, adr/0020).
 */
import { describeThrown } from './describe-thrown.js';
import { ErrorClassRegistry } from './error-classes.js';
import { errorFromJson, errorToJson, type Json } from './error-codec.js';
import { type ErrorClass, PayloadTooLargeError, SerializationError } from './errors.js';

/** Values the codec records as they are. */
type RecordedAsIs = string | number | boolean | bigint | null | undefined | Date | Error | Uint8Array;

/** What a value holding something the codec refuses is compared with: the error names `what`. */
export interface NotRecordable<What extends string> {
  readonly notRecordable: What;
}

/**
 * `T` where the codec can record it, checked at compile time: plain data (objects, arrays,
 * strings, numbers, booleans, null), `undefined`, `Date`, `BigInt`, `Map`, `Set`, `Error`,
 * `Uint8Array` and `Buffer`, nested. A function, a symbol, or an object with methods (a `URL`,
 * a class instance with methods) maps to {@link NotRecordable}, so it fails to compile where a
 * step returns it. TypeScript cannot tell a class instance with fields only from plain data:
 * the codec refuses that one at run time (`SerializationError`). `unknown` and `any` pass.
 */
export type Recordable<T> = unknown extends T
  ? T
  : T extends RecordedAsIs
    ? T
    : T extends void
      ? T
      : T extends (...args: never[]) => unknown
        ? NotRecordable<'a function or method'>
        : T extends symbol
          ? NotRecordable<'a symbol'>
          : T extends ReadonlyMap<infer K, infer V>
            ? ReadonlyMap<Recordable<K>, Recordable<V>>
            : T extends ReadonlySet<infer E>
              ? ReadonlySet<Recordable<E>>
              : T extends object
                ? { [K in keyof T]: Recordable<T[K]> }
                : NotRecordable<'an unknown kind of value'>;

/** Default per-event payload limit: 1 MiB of encoded text. */
export const DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;

/**
 * Deepest nesting of a value the codec records: arrays, objects, Maps, Sets and Errors inside
 * one another, the value itself counted. Deeper is refused with a {@link SerializationError}.
 */
export const MAX_DEPTH = 500;

/** Nesting of an event payload: the payload object, then a value of up to {@link MAX_DEPTH}. */
const PAYLOAD_DEPTH = MAX_DEPTH + 1;

const TAG = '$t';

/**
 * Encodes and decodes payloads, reviving recorded errors through its error classes. Every
 * codec encodes the same text; they differ only in which classes decoding revives.
 */
export class Codec {
  /** @param classes what decoding revives errors as (see error-classes.ts). */
  constructor(private readonly classes: ErrorClassRegistry) {}

  /** Encode a value to text. Throws {@link SerializationError} for what it cannot represent. */
  encode(value: unknown): string {
    return encode(value);
  }

  /** Decode text written by {@link encode}. */
  decode<T = unknown>(text: string): T {
    return fromJson(JSON.parse(text) as Json, this.classes) as T;
  }

  /**
   * Encode an event payload (an object whose fields hold values of up to {@link MAX_DEPTH}
   * levels), and give back what decoding the text gives (`view`), so that the first run sees
   * what a replay will. Plain JSON data is its own view: no copy is made. A field of the
   * payload itself that is `undefined` is left out of the text (a step that returns nothing
   * takes the fast path): every payload reads an absent field as `undefined`.
   */
  record(payload: unknown): { text: string; view: unknown } {
    const plain = plainPayloadText(payload);
    if (plain !== undefined) return { text: plain, view: payload };
    const tree = walk(payload, PAYLOAD_DEPTH);
    return { text: JSON.stringify(tree), view: fromJson(tree, this.classes) };
  }
}

/**
 * A codec that also revives `errors`, classes of your own (see `defineWorkflow({ errors })`).
 * A runtime makes its own from its options; use this one to decode logs elsewhere alike.
 * @param options.errors classes to revive (default: none; Skein's and built-in errors always are).
 */
export function createCodec(options: { errors?: readonly ErrorClass[] } = {}): Codec {
  return new Codec(new ErrorClassRegistry(options.errors ?? [], 'createCodec'));
}

/** The codec of {@link encode} and {@link decode}: Skein's and built-in error classes only. */
export const defaultCodec: Codec = new Codec(new ErrorClassRegistry([]));

/** Encode a value to text. Throws {@link SerializationError} for what it cannot represent. */
export function encode(value: unknown): string {
  // Most payloads are plain JSON data, whose text is JSON.stringify's: no copy to build.
  return plainText(value) ?? JSON.stringify(walk(value, MAX_DEPTH));
}

/**
 * {@link encode} of a value that holds recorded values `levels` deep (an event payload holds
 * them one level down, a snapshot's state a few): they may nest {@link MAX_DEPTH} levels each.
 */
export function encodeHolding(value: unknown, levels: number): string {
  return plainText(value) ?? JSON.stringify(walk(value, MAX_DEPTH + levels));
}

/** Decode text written by {@link encode}, reviving Skein's and built-in error classes. */
export function decode<T = unknown>(text: string): T {
  return defaultCodec.decode<T>(text);
}

/** Nesting the plain-data check follows; deeper values (and cycles) take the full walk. */
const MAX_PLAIN_DEPTH = 64;

/** JSON.stringify's text of `value` when it is plain JSON data (see {@link isPlainJson}), else undefined. */
function plainText(value: unknown): string | undefined {
  try {
    return isPlainJson(value, 0) ? JSON.stringify(value) : undefined;
  } catch {
    // Reading it threw (a getter, a proxy): the full walk reads it again and names where.
    return undefined;
  }
}

/**
 * {@link plainText} of an event payload, where fields of the payload object itself may also be
 * `undefined` (JSON.stringify leaves them out).
 */
function plainPayloadText(payload: unknown): string | undefined {
  if (typeof payload !== 'object' || payload === null || Object.getPrototypeOf(payload) !== Object.prototype)
    return plainText(payload);
  try {
    if (Object.hasOwn(payload, TAG) || Object.hasOwn(payload, 'toJSON')) return undefined;
    for (const key of Object.keys(payload)) {
      const field = (payload as Record<string, unknown>)[key];
      if (field !== undefined && !isPlainJson(field, 1)) return undefined;
    }
    return JSON.stringify(payload);
  } catch {
    // Reading it threw (a getter, a proxy): the full walk reads it again and names where.
    return undefined;
  }
}

/**
 * True when `value` is JSON data that the full walk would copy unchanged: strings, booleans,
 * finite numbers other than -0, null, and arrays and plain objects of those, with no `$t` key
 * and no own `toJSON`. Anything else (undefined, a hole, a Date, a function, bytes, …) returns
 * false and is encoded, or refused, by the full walk.
 */
function isPlainJson(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0);
    case 'object': {
      if (value === null) return true;
      if (depth >= MAX_PLAIN_DEPTH || Object.hasOwn(value, 'toJSON')) return false;
      const proto = Object.getPrototypeOf(value);
      if (proto === Array.prototype) {
        const array = value as unknown[];
        for (let i = 0; i < array.length; i++) if (!isPlainJson(array[i], depth + 1)) return false;
        return true;
      }
      if ((proto !== Object.prototype && proto !== null) || Object.hasOwn(value, TAG)) return false;
      for (const key of Object.keys(value)) {
        if (!isPlainJson((value as Record<string, unknown>)[key], depth + 1)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

/** Byte length of encoded text, as stores count it (UTF-8). */
export function encodedBytes(text: string): number {
  // Every UTF-16 unit encodes to at most 3 bytes: skip the exact count when it cannot matter.
  return text.length <= 0x3fff ? text.length * 3 : Buffer.byteLength(text, 'utf8');
}

/**
 * Throw {@link PayloadTooLargeError} when `text` is over `limit` bytes.
 * @param where what the payload is, for the message (e.g. `output of step "charge"`).
 */
export function assertPayloadSize(executionId: string, where: string, text: string, limit: number): void {
  if (text.length * 3 <= limit) return;
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > limit) throw new PayloadTooLargeError(executionId, where, bytes, limit);
}

/** One full walk: the objects on the current path (cycles) and the nesting allowed. */
interface Walk {
  seen: Set<object>;
  maxDepth: number;
}

/** The tree form of `value`; every failure to record it is a {@link SerializationError}. */
function walk(value: unknown, maxDepth: number): Json {
  try {
    return toJson(value, '$', { seen: new Set(), maxDepth }, 0);
  } catch (error) {
    throw asSerializationError(error, '$');
  }
}

function toJson(value: unknown, path: string, walk: Walk, depth: number): Json {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (Object.is(value, -0)) return { [TAG]: 'n', v: '-0' };
      return Number.isFinite(value) ? value : { [TAG]: 'n', v: String(value) };
    case 'undefined':
      return { [TAG]: 'u' };
    case 'bigint':
      return { [TAG]: 'b', v: value.toString() };
    case 'object':
      return value === null ? null : objectToJson(value, path, walk, depth);
    default:
      throw new SerializationError(path, `a ${typeof value} has no recorded form`);
  }
}

function objectToJson(value: object, path: string, walk: Walk, depth: number): Json {
  if (depth >= walk.maxDepth)
    throw new SerializationError(path, `it is nested deeper than ${MAX_DEPTH} levels`);
  if (walk.seen.has(value)) throw new SerializationError(path, 'it refers back to itself (a cycle)');
  walk.seen.add(value);
  try {
    return objectBody(value, path, walk, depth + 1);
  } catch (error) {
    throw asSerializationError(error, path);
  } finally {
    walk.seen.delete(value);
  }
}

const TO_JSON_REASON =
  'it has a toJSON method; the codec records the value itself, never what toJSON returns (record that instead)';

function objectBody(value: object, path: string, walk: Walk, depth: number): Json {
  if (Array.isArray(value)) return arrayToJson(value, path, walk, depth);
  const proto = Object.getPrototypeOf(value);
  if (proto === Object.prototype || proto === null) return plainObjectToJson(value, path, walk, depth);
  if (value instanceof Date) {
    const time = value.getTime();
    return { [TAG]: 'd', v: Number.isNaN(time) ? 'invalid' : value.toISOString() };
  }
  const nested = (item: unknown, at: string) => toJson(item, at, walk, depth);
  if (value instanceof Map)
    return {
      [TAG]: 'm',
      v: [...value].map(([k, v], i) => [nested(k, `${path}<key ${i}>`), nested(v, `${path}<value ${i}>`)]),
    };
  if (value instanceof Set)
    return { [TAG]: 's', v: [...value].map((item, i) => nested(item, `${path}<${i}>`)) };
  if (value instanceof Error) return errorToJson(value, path, nested);
  if (value instanceof Uint8Array) return bytesToJson(value, proto, path);
  throw new SerializationError(path, `an instance of ${className(proto)} is not plain data`);
}

function arrayToJson(array: unknown[], path: string, walk: Walk, depth: number): Json {
  if (typeof (array as { toJSON?: unknown }).toJSON === 'function')
    throw new SerializationError(path, TO_JSON_REASON);
  const out: Json[] = new Array(array.length);
  for (let i = 0; i < array.length; i++) {
    const at = `${path}[${i}]`;
    out[i] = toJson(read(array, i, at), at, walk, depth);
  }
  return out;
}

function plainObjectToJson(value: object, path: string, walk: Walk, depth: number): Json {
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function')
    throw new SerializationError(path, TO_JSON_REASON);
  const out: { [key: string]: Json } = {};
  for (const key of Object.keys(value)) {
    const at = `${path}.${key}`;
    setOwn(out, key, toJson(read(value, key, at), at, walk, depth));
  }
  return Object.hasOwn(out, TAG) ? { [TAG]: 'o', v: out } : out;
}

/** A Uint8Array as `y`, a Buffer as `B`, both base64; other views (and subclasses) are refused. */
function bytesToJson(bytes: Uint8Array, proto: unknown, path: string): Json {
  const tag = proto === Uint8Array.prototype ? 'y' : proto === Buffer.prototype ? 'B' : undefined;
  if (tag === undefined)
    throw new SerializationError(
      path,
      `an instance of ${className(proto)} is not plain data (Uint8Array and Buffer are)`,
    );
  return { [TAG]: tag, v: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64') };
}

/** `target[key]`, with a throwing getter refused at the field's own path. */
function read(target: object, key: string | number, path: string): unknown {
  try {
    return (target as Record<string | number, unknown>)[key];
  } catch (error) {
    throw asSerializationError(error, path);
  }
}

function className(proto: unknown): string {
  return (proto as { constructor?: { name?: string } } | null)?.constructor?.name ?? 'unknown';
}

/** `error` itself when it is a {@link SerializationError}; else one at `path` with it as `cause`. */
function asSerializationError(error: unknown, path: string): SerializationError {
  if (error instanceof SerializationError) return error;
  return new SerializationError(path, `reading it threw ${describeThrown(error)}`, { cause: error });
}

function fromJson(json: Json, classes: ErrorClassRegistry): unknown {
  if (json === null || typeof json !== 'object') return json;
  if (Array.isArray(json)) return json.map((item) => fromJson(item, classes));
  const tag = json[TAG];
  if (typeof tag !== 'string') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(json)) setOwn(out, key, fromJson(json[key] as Json, classes));
    return out;
  }
  const v = json.v as Json;
  switch (tag) {
    case 'u':
      return undefined;
    case 'n':
      return Number(v);
    case 'b':
      return BigInt(v as string);
    case 'd':
      return new Date(v === 'invalid' ? Number.NaN : (v as string));
    case 'm':
      return new Map((v as [Json, Json][]).map(([k, val]) => [fromJson(k, classes), fromJson(val, classes)]));
    case 's':
      return new Set((v as Json[]).map((item) => fromJson(item, classes)));
    case 'e':
      return errorFromJson(json, classes, (nested) => fromJson(nested, classes));
    case 'y':
      return new Uint8Array(Buffer.from(v as string, 'base64'));
    case 'B':
      return Buffer.from(v as string, 'base64');
    case 'o': {
      const out: Record<string, unknown> = {};
      for (const [key, val] of Object.entries(v as { [key: string]: Json }))
        setOwn(out, key, fromJson(val, classes));
      return out;
    }
    default:
      throw new SerializationError('$', `unknown codec tag "${tag}"`);
  }
}

/**
 * Set an own, enumerable property. Plain assignment would treat a `__proto__` key (valid
 * in JSON data) as the prototype: the key would vanish and the object's prototype change.
 */
function setOwn(target: object, key: string, value: unknown): void {
  // Plain assignment keeps objects fast; only `__proto__` would hit the prototype setter.
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    (target as Record<string, unknown>)[key] = value;
  }
}
