/**
 * The one codec every payload goes through: JSON plus Date, BigInt, Map, Set, undefined,
 * Error and non-finite numbers. Anything else (functions, symbols, class instances, cycles)
 * is refused with a {@link SerializationError} naming the path, before anything is written.
 *
 * Special values are written as `{"$t": tag, "v": value}`; a plain object that itself has a
 * `$t` key is wrapped as `{"$t": "o", "v": {...}}`, so user data can never be mistaken for a tag.
 */
import { PayloadTooLargeError, SerializationError } from './errors.js';

/** Default per-event payload limit: 1 MiB of encoded text. */
export const DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const TAG = '$t';

/** Encode a value to text. Throws {@link SerializationError} for what it cannot represent. */
export function encode(value: unknown): string {
  // Most payloads are plain JSON data, whose text is JSON.stringify's: no copy to build.
  if (isPlainJson(value, 0)) return JSON.stringify(value);
  return JSON.stringify(toJson(value, '$', new Set()));
}

/** Nesting the plain-data check follows; deeper values (and cycles) take the full walk. */
const MAX_PLAIN_DEPTH = 64;

/**
 * True when `value` is JSON data that the full walk would copy unchanged: strings, booleans,
 * finite numbers other than -0, null, and arrays and plain objects of those, with no `$t` key.
 * Anything else (undefined, a hole, a Date, a function, a `toJSON`, …) returns false and is
 * encoded, or refused, by the full walk.
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
      if (depth >= MAX_PLAIN_DEPTH) return false;
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

/** Decode text written by {@link encode}. */
export function decode<T = unknown>(text: string): T {
  return fromJson(JSON.parse(text) as Json) as T;
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

function toJson(value: unknown, path: string, seen: Set<object>): Json {
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
      return value === null ? null : objectToJson(value, path, seen);
    default:
      throw new SerializationError(path, `a ${typeof value} has no recorded form`);
  }
}

function objectToJson(value: object, path: string, seen: Set<object>): Json {
  if (seen.has(value)) throw new SerializationError(path, 'it refers back to itself (a cycle)');
  seen.add(value);
  try {
    if (Array.isArray(value)) return value.map((item, i) => toJson(item, `${path}[${i}]`, seen));
    if (value instanceof Date) {
      const time = value.getTime();
      return { [TAG]: 'd', v: Number.isNaN(time) ? 'invalid' : value.toISOString() };
    }
    if (value instanceof Map) {
      return {
        [TAG]: 'm',
        v: [...value].map(([k, v], i) => [
          toJson(k, `${path}<key ${i}>`, seen),
          toJson(v, `${path}<value ${i}>`, seen),
        ]),
      };
    }
    if (value instanceof Set)
      return { [TAG]: 's', v: [...value].map((item, i) => toJson(item, `${path}<${i}>`, seen)) };
    if (value instanceof Error) return { [TAG]: 'e', v: errorToJson(value, path, seen) };
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      const name = (proto?.constructor as { name?: string } | undefined)?.name ?? 'unknown';
      throw new SerializationError(path, `an instance of ${name} is not plain data`);
    }
    const out: { [key: string]: Json } = {};
    for (const key of Object.keys(value)) {
      setOwn(out, key, toJson((value as Record<string, unknown>)[key], `${path}.${key}`, seen));
    }
    return Object.hasOwn(out, TAG) ? { [TAG]: 'o', v: out } : out;
  } finally {
    seen.delete(value);
  }
}

function errorToJson(error: Error, path: string, seen: Set<object>): Json {
  const out: { [key: string]: Json } = { name: error.name, message: error.message };
  if (error.stack !== undefined) out.stack = error.stack;
  for (const key of Object.keys(error)) {
    if (key === 'name' || key === 'message' || key === 'stack' || key === 'cause') continue;
    const field = (error as unknown as Record<string, unknown>)[key];
    if (typeof field === 'function') continue;
    setOwn(out, key, toJson(field, `${path}.${key}`, seen));
  }
  if ('cause' in error) out.cause = toJson(error.cause, `${path}.cause`, seen);
  return out;
}

function fromJson(json: Json): unknown {
  if (json === null || typeof json !== 'object') return json;
  if (Array.isArray(json)) return json.map(fromJson);
  const tag = json[TAG];
  if (typeof tag !== 'string') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(json)) setOwn(out, key, fromJson(json[key] as Json));
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
      return new Map((v as [Json, Json][]).map(([k, val]) => [fromJson(k), fromJson(val)]));
    case 's':
      return new Set((v as Json[]).map(fromJson));
    case 'e':
      return errorFromJson(v as { [key: string]: Json });
    case 'o': {
      const out: Record<string, unknown> = {};
      for (const [key, val] of Object.entries(v as { [key: string]: Json })) setOwn(out, key, fromJson(val));
      return out;
    }
    default:
      throw new SerializationError('$', `unknown codec tag "${tag}"`);
  }
}

function errorFromJson(fields: { [key: string]: Json }): Error {
  const { name, message, stack, cause, ...rest } = fields;
  const error = new Error(
    String(message ?? ''),
    cause === undefined ? undefined : { cause: fromJson(cause) },
  );
  Object.defineProperty(error, 'name', {
    value: String(name ?? 'Error'),
    writable: true,
    configurable: true,
  });
  if (typeof stack === 'string') error.stack = stack;
  for (const [key, val] of Object.entries(rest)) setOwn(error, key, fromJson(val));
  return error;
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
