/**
 * `result({ timeoutMs })`: a wait for an execution's end that gives up after `timeoutMs` of
 * wall-clock time with `ResultTimeoutError`. Giving up changes nothing: the execution goes on,
 * and the abandoned poll stops at its next round.
 */
import { z } from 'zod';
import { durationMsSchema } from './durations.js';
import { ResultTimeoutError } from './errors.js';
import { parseWith } from './workflow.js';

/** Options of `result()` (a runtime's, a client's, a handle's). */
export interface ResultOptions {
  /** Reject with `ResultTimeoutError` when the execution has not ended after this many ms (default: wait forever). */
  timeoutMs?: number;
  /** First poll interval in ms; it doubles up to 1 s (default: 50). */
  pollMs?: number;
}

const DEFAULT_POLL_MS = 50;
const optionsSchema = z.object({
  timeoutMs: durationMsSchema.optional(),
  pollMs: durationMsSchema.optional(),
});

/** The options checked (a number is `pollMs`); throws `InvalidInputError` naming the field. */
export function resultOptions(options: ResultOptions | number): { pollMs: number; timeoutMs?: number } {
  const given = typeof options === 'number' ? { pollMs: options } : options;
  const parsed = parseWith(optionsSchema, given, 'result options', 'options');
  const pollMs = Math.max(1, parsed.pollMs ?? DEFAULT_POLL_MS);
  return parsed.timeoutMs === undefined ? { pollMs } : { pollMs, timeoutMs: parsed.timeoutMs };
}

/**
 * `wait`, or `ResultTimeoutError` (with the status `status` reads then) once `timeoutMs` passed.
 * `wait` is told through `stopped()` that nobody waits for it any more.
 */
export function withDeadline<T>(
  executionId: string,
  timeoutMs: number | undefined,
  status: () => Promise<string>,
  wait: (stopped: () => boolean) => Promise<T>,
): Promise<T> {
  if (timeoutMs === undefined) return wait(() => false);
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      stopped = true;
      const fail = (now: string) => reject(new ResultTimeoutError(executionId, timeoutMs, now));
      status().then(fail, () => fail('unknown'));
    }, timeoutMs);
  });
  // Once the deadline passed, the timeout answers (after reading the status), whatever the
  // abandoned wait ends with meanwhile.
  const never = new Promise<never>(() => undefined);
  const waited = wait(() => stopped).then(
    (value) => (stopped ? never : value),
    (error: unknown) => (stopped ? never : Promise.reject(error)),
  );
  return Promise.race([waited, timeout]).finally(() => clearTimeout(timer));
}
