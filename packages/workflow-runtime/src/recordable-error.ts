/**
 * A thrown value as the log can hold it: whatever a step or a body throws, its failure is
 * recorded. The value itself when the codec takes it; else, for an error, a copy that keeps
 * its class chain, name, message, stack, every field the codec takes and a recordable cause;
 * else the value's text (or, when even that throws, a sentence saying so).
 */
import { encode } from './codec.js';

/** Causes copied below a refused error; deeper ones are recorded as text. */
const MAX_CAUSES = 8;

/** See the module comment. Never throws. */
export function recordableError(error: unknown): unknown {
  return recordable(error, 0);
}

function recordable(error: unknown, depth: number): unknown {
  if (encodes(error)) return error;
  if (depth < MAX_CAUSES && isError(error)) {
    const copy = copyOf(error, depth);
    if (encodes(copy)) return copy;
  }
  return describe(error);
}

/** True when the codec takes `value` whole. */
function encodes(value: unknown): boolean {
  try {
    encode(value);
    return true;
  } catch {
    // Refused: the caller records a copy or the text instead.
    return false;
  }
}

function isError(value: unknown): value is Error {
  try {
    return value instanceof Error;
  } catch {
    // A revoked proxy: no prototype to ask, so not an error as far as the log goes.
    return false;
  }
}

function copyOf(error: Error, depth: number): Error {
  const copy = new Error(attempt(() => String(error.message), ''));
  const proto = attempt(() => Object.getPrototypeOf(error) as object | null, Error.prototype);
  if (proto !== Error.prototype) Object.setPrototypeOf(copy, proto);
  const name = attempt(() => String(error.name), 'Error');
  if (attempt(() => copy.name, undefined) !== name) hidden(copy, 'name', name);
  const stack = attempt(() => error.stack, undefined);
  if (typeof stack === 'string') hidden(copy, 'stack', stack);
  for (const key of attempt(() => Object.keys(error), [])) {
    if (key === 'name' || key === 'message' || key === 'stack' || key === 'cause') continue;
    const field = attempt(() => (error as unknown as Record<string, unknown>)[key], undefined);
    if (typeof field !== 'function' && encodes(field))
      Object.defineProperty(copy, key, {
        value: field,
        enumerable: true,
        writable: true,
        configurable: true,
      });
  }
  if (attempt(() => 'cause' in error, false))
    hidden(
      copy,
      'cause',
      recordable(
        attempt(() => error.cause, undefined),
        depth + 1,
      ),
    );
  return copy;
}

/**
 * `error` (as {@link recordableError} gave it) cut down to about `maxBytes / 8` characters of
 * message, for a failure whose whole error is over the payload limit: its class, name and
 * `code` stay; stack, fields and cause go.
 */
export function shrunkError(error: unknown, maxBytes: number): unknown {
  const room = Math.max(16, Math.floor(maxBytes / 8));
  const cut = (text: string) => (text.length <= room ? text : `${text.slice(0, room)}… (cut to fit the log)`);
  if (!isError(error)) return cut(describe(error));
  const copy = new Error(cut(attempt(() => String(error.message), '')));
  const proto = attempt(() => Object.getPrototypeOf(error) as object | null, Error.prototype);
  if (proto !== Error.prototype) Object.setPrototypeOf(copy, proto);
  const name = cut(attempt(() => String(error.name), 'Error'));
  if (attempt(() => copy.name, undefined) !== name) hidden(copy, 'name', name);
  hidden(copy, 'stack', undefined);
  const code = attempt(() => (error as { code?: unknown }).code, undefined);
  if (typeof code === 'string' && code.length <= room)
    Object.defineProperty(copy, 'code', {
      value: code,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return copy;
}

function describe(value: unknown): string {
  try {
    return String(value);
  } catch (error) {
    const why = attempt(() => (error instanceof Error ? error.message : String(error)), 'unknown');
    return `a thrown value that can be neither recorded nor printed (${why})`;
  }
}

/** `read()`, or `fallback` when reading throws (a getter, a revoked proxy). */
function attempt<T>(read: () => T, fallback: T): T {
  try {
    return read();
  } catch {
    // What cannot be read is left out of the recorded copy.
    return fallback;
  }
}

function hidden(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: false, writable: true, configurable: true });
}
