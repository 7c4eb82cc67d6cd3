/**
 * Errors in the codec (adr/0020). An error is recorded as `{"$t": "e", "v": fields, "c": chain}`:
 * `fields` holds its name, message, stack, cause and own enumerable fields, `chain` the names
 * of its class chain (left out for a plain `Error`), and an AggregateError's `errors` go in `a`.
 * Decoding revives it through an {@link ErrorClassRegistry} without running any constructor:
 * the instance is a real error of the revived class with the recorded fields set on it.
 */
import { classChain, type ErrorClassRegistry } from './error-classes.js';
import { serializeError } from './errors.js';

/** The codec's tree form (JSON values). */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** How the codec walks one nested value: `path` names it in refusals. */
export type ToJson = (value: unknown, path: string) => Json;

const OWN_SLOTS = new Set(['name', 'message', 'stack', 'cause']);

/** The recorded form of `error`; fields go through `toJson` (which refuses what it cannot record). */
export function errorToJson(error: Error, path: string, toJson: ToJson): Json {
  const fields: { [key: string]: Json } = {
    name: typeof error.name === 'string' ? error.name : String(error.name),
    message: typeof error.message === 'string' ? error.message : String(error.message),
  };
  if (typeof error.stack === 'string') fields.stack = error.stack;
  for (const key of Object.keys(error)) {
    if (OWN_SLOTS.has(key)) continue;
    const field = (error as unknown as Record<string, unknown>)[key];
    if (typeof field === 'function') continue;
    putOwn(fields, key, toJson(field, `${path}.${key}`));
  }
  if ('cause' in error) fields.cause = toJson(error.cause, `${path}.cause`);
  const recorded: { [key: string]: Json } = { $t: 'e', v: fields };
  const chain = classChain(error);
  if (chain.length !== 1 || chain[0] !== 'Error') recorded.c = chain;
  if (error instanceof AggregateError && Array.isArray(error.errors))
    recorded.a = error.errors.map((inner: unknown, i) => toJson(inner, `${path}.errors[${i}]`));
  return recorded;
}

/** Revive an error recorded by {@link errorToJson}; nested values go through `fromJson`. */
export function errorFromJson(
  recorded: { [key: string]: Json },
  classes: ErrorClassRegistry,
  fromJson: (json: Json) => unknown,
): Error {
  const { name, message, stack, cause, ...rest } = recorded.v as { [key: string]: Json };
  const chain = Array.isArray(recorded.c) ? recorded.c.filter((n): n is string => typeof n === 'string') : [];
  const { errorClass, intrinsic } = classes.resolve(chain.length === 0 ? ['Error'] : chain, rest.code);
  const text = String(message ?? '');
  const named = String(name ?? 'Error');
  const options = cause === undefined ? undefined : { cause: fromJson(cause) };
  let args: unknown[];
  if (intrinsic === AggregateError) {
    const inner = Array.isArray(recorded.a) ? recorded.a.map(fromJson) : [];
    args = options === undefined ? [inner, text] : [inner, text, options];
  } else if (intrinsic === DOMException) {
    args = [text, { name: named, ...options }];
  } else {
    args = options === undefined ? [text] : [text, options];
  }
  const error = Reflect.construct(intrinsic, args, errorClass) as Error;
  if (error.name !== named) hidden(error, 'name', named);
  if (typeof stack === 'string') hidden(error, 'stack', stack);
  for (const [key, value] of Object.entries(rest)) putOwn(error, key, fromJson(value));
  // So that JSON.stringify writes `{ code?, name, message, cause? }` rather than `{}`.
  if (typeof (error as { toJSON?: unknown }).toJSON !== 'function') hidden(error, 'toJSON', errorToJSON);
  return error;
}

function errorToJSON(this: unknown): unknown {
  return serializeError(this);
}

/** An own, enumerable field (shadowing a prototype getter of the same name, and `__proto__`). */
function putOwn(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** An own field that is not enumerable, as `Error` makes `message` and `stack`. */
function hidden(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: false, writable: true, configurable: true });
}
