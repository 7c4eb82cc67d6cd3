/**
 * Durations and instants at the API boundary (adr/0032): one zod schema for every duration a
 * caller gives (sleeps, signal and step timeouts, retry delays, lease TTLs, supervisor
 * intervals). A duration is a finite number of milliseconds >= 0; a fraction is rounded up to
 * the next whole millisecond (a wait never ends early, and every store keeps whole
 * milliseconds). Anything else (`Infinity`, `NaN`, a string, a negative number) is refused with
 * an `InvalidInputError` naming the call and the field, before anything is written.
 */
import { z } from 'zod';
import { parseWith } from './workflow.js';

/** Largest duration accepted: about 285,000 years, far past any timer, still a safe integer. */
export const MAX_DURATION_MS = Number.MAX_SAFE_INTEGER;

/** A duration in ms: finite, >= 0, rounded up to a whole millisecond. */
export const durationMsSchema = z
  .number({ error: (issue) => refusal(issue.input) })
  .refine((ms) => Number.isFinite(ms) && ms >= 0 && ms <= MAX_DURATION_MS, {
    error: (issue) => refusal(issue.input),
  })
  .transform((ms) => Math.ceil(ms));

/** A duration that must be at least 1 ms (an interval, a TTL). */
export const positiveDurationMsSchema = durationMsSchema.refine((ms) => ms >= 1, {
  error: (issue) => `ms must be >= 1, got ${show(issue.input)}`,
});

/** An instant in ms since the epoch (or a Date), finite, rounded up to a whole millisecond. */
export const instantSchema = z
  .union([z.date(), z.number()], {
    error: (issue) => `must be a Date or ms since the epoch, got ${show(issue.input)}`,
  })
  .transform((at) => (typeof at === 'number' ? at : at.getTime()))
  .refine((ms) => Number.isFinite(ms) && Math.abs(ms) <= MAX_DURATION_MS, {
    error: () => 'not a valid time',
  })
  .transform((ms) => Math.ceil(ms));

/**
 * `value` as a whole, non-negative number of ms; throws `InvalidInputError` naming `where` and `field`.
 * @example
 * durationMs(1.5, 'ctx.sleep("nap")', 'ms'); // 2
 */
export function durationMs(value: unknown, where: string, field: string): number {
  return parseWith(durationMsSchema, value, where, field);
}

/** Like {@link durationMs}, for a duration that must be at least 1 ms; undefined stays undefined. */
export function optionalPositiveMs(value: unknown, where: string, field: string): number | undefined {
  if (value === undefined) return undefined;
  return parseWith(positiveDurationMsSchema, value, where, field);
}

/** Like {@link durationMs}; undefined stays undefined. */
export function optionalDurationMs(value: unknown, where: string, field: string): number | undefined {
  return value === undefined ? undefined : durationMs(value, where, field);
}

function refusal(value: unknown): string {
  return `must be a finite number of milliseconds >= 0, got ${show(value)}`;
}

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean')
    return String(value);
  if (value === null) return 'null';
  if (value instanceof Date) return 'an invalid Date';
  return typeof value;
}
