/**
 * Identifiers: ULIDs from a monotonic factory. Within one millisecond a ULID costs ~1 µs (the
 * factory increments the last one); in a new millisecond the factory draws 16 random values,
 * and with its default source each is its own `crypto.getRandomValues` call (~20 µs a ULID
 * here, i.e. ~40 µs of every step). So the factory draws from a pool of random bytes that one
 * `getRandomValues` call refills every 4 KiB.
 *
 * And the rules every string key shares at every boundary: ids and names are well-formed
 * Unicode (no lone surrogate), so every store keeps them exactly.
 */
import { webcrypto } from 'node:crypto';
import { monotonicFactory } from 'ulid';
import { z } from 'zod';
import { InvalidInputError } from './errors.js';

const POOL_BYTES = 4096;
const pool = new Uint8Array(POOL_BYTES);
let used = POOL_BYTES;

/** A uniform value in [0, 1) in steps of 1/256, from the pool (what the factory asks of a PRNG). */
function pooledRandom(): number {
  if (used === POOL_BYTES) {
    webcrypto.getRandomValues(pool);
    used = 0;
  }
  const byte = pool[used]!;
  used += 1;
  return byte / 256;
}

const next = monotonicFactory(pooledRandom);

/** A new ULID; strictly increasing within this process. */
export function newId(): string {
  return next();
}

/** Longest execution id the runtime accepts. */
export const MAX_EXECUTION_ID_LENGTH = 255;

/**
 * One UTF-16 code unit of U+D800–U+DFFF that is not half of a pair. In a `u` regex a pair is
 * one code point, so only unpaired surrogates match.
 */
const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * True when `text` is well-formed UTF-16: every surrogate is half of a pair (what
 * `String.prototype.isWellFormed` says; Node 20 does not have it). A lone surrogate has no
 * UTF-8 form: SQLite and PostgreSQL would store U+FFFD in its place, so two distinct ids
 * would become one, or an id read back would name nothing.
 */
export function isWellFormed(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

/** Why `text` is refused, or undefined when it is well-formed. */
export function illFormedReason(text: string): string | undefined {
  const match = LONE_SURROGATE.exec(text);
  if (match === null) return undefined;
  const unit = text.charCodeAt(match.index).toString(16).toUpperCase();
  return `must be well-formed Unicode, but has a lone surrogate (U+${unit}) at index ${match.index}, which cannot be stored`;
}

/** `schema`, refusing a string with a lone surrogate (see {@link isWellFormed}). */
export function wellFormed<T extends z.ZodString>(schema: T): T {
  return schema.superRefine((value, ctx) => {
    const reason = illFormedReason(value);
    if (reason !== undefined) ctx.addIssue({ code: 'custom', message: reason });
  }) as T;
}

/** An execution id: 1 to {@link MAX_EXECUTION_ID_LENGTH} characters, well-formed Unicode. */
export const executionIdSchema = wellFormed(z.string().min(1).max(MAX_EXECUTION_ID_LENGTH));

/** A name (of a workflow, signal, step, timer, ...): non-empty, well-formed Unicode. */
export const nameSchema = wellFormed(z.string().min(1));

/**
 * Throw `InvalidInputError` (at `where`, field `path`) unless `value` is a non-empty,
 * well-formed string: the check of {@link nameSchema} without a zod parse (~60 ns), for
 * context calls and other paths where a parse would cost more than the check.
 */
export function assertName(value: unknown, where: string, path: string): asserts value is string {
  if (typeof value === 'string' && value.length > 0 && !LONE_SURROGATE.test(value)) return;
  const message =
    typeof value !== 'string' || value.length === 0
      ? `must be a non-empty string, got ${typeof value === 'string' ? '""' : typeof value}`
      : illFormedReason(value)!;
  throw new InvalidInputError(where, [{ path, message }]);
}

/** {@link assertName} for the name of a context call of `kind` (its message built only on failure). */
export function assertCallName(kind: string, name: unknown): void {
  if (typeof name === 'string' && name.length > 0 && !LONE_SURROGATE.test(name)) return;
  assertName(name, `ctx.${kind === 'signal' ? 'waitForSignal' : kind} call`, 'name');
}

/** {@link assertName} for an execution id, which is also at most {@link MAX_EXECUTION_ID_LENGTH} long. */
export function assertExecutionId(value: unknown, where: string): asserts value is string {
  assertName(value, where, 'executionId');
  if (value.length > MAX_EXECUTION_ID_LENGTH) {
    throw new InvalidInputError(where, [
      {
        path: 'executionId',
        message: `must be at most ${MAX_EXECUTION_ID_LENGTH} characters, got ${value.length}`,
      },
    ]);
  }
}
