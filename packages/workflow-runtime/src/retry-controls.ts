/**
 * Retry controls of a step (adr/0066): errors that fail the step at once (`nonRetryable`), a
 * caller's `shouldRetry` predicate, and an error that says when to retry (`retryAfterMs`).
 * The decision is made once, when the attempt fails, and recorded in its `STEP_FAILED` (the
 * delay, or why there is no retry), so a replay reads it and never decides again.
 */
import { z } from 'zod';
import { describeThrown } from './describe-thrown.js';
import { durationMsSchema } from './durations.js';
import type { ErrorClass } from './errors.js';
import { type ResolvedRetryPolicy, type RetryPolicy, retryDelay } from './retry.js';
import { parseWith } from './workflow.js';

/** A step's retry policy: the backoff of {@link RetryPolicy} and the controls over it. */
export interface StepRetryPolicy extends RetryPolicy {
  /**
   * Errors that fail the step at once, whatever budget is left: a class (matched with
   * `instanceof`) or a name (matched against `error.name` and the names of its class chain)
   * (default: none).
   */
  nonRetryable?: readonly (string | ErrorClass)[];
  /**
   * Asked after a failed attempt while budget is left: false fails the step at once. A throw
   * counts as false and is recorded with the failure (default: always retry).
   */
  shouldRetry?: (error: unknown, attempt: number) => boolean;
  /**
   * Largest delay an error's own `retryAfterMs` may ask for; a longer ask waits this long
   * (default: no bound).
   */
  maxRetryAfterMs?: number;
}

/** Why a failed attempt is not retried, as its `STEP_FAILED` records it (`noRetry`). */
export type NoRetryReason = 'budget' | 'non-retryable' | 'should-retry' | 'should-retry-threw';

/** What the policy decided about a failed attempt. */
export type RetryDecision =
  | { retry: true; delayMs: number; retryAfterMs?: number }
  | { retry: false; reason: NoRetryReason; thrown?: string };

const isFunction = (value: unknown): boolean => typeof value === 'function';

const controlsSchema = z.object({
  nonRetryable: z
    .array(
      z.union([
        z.string().min(1, 'an error name must not be empty'),
        z.custom<ErrorClass>(isFunction, 'must be an error name or an error class'),
      ]),
    )
    .optional(),
  shouldRetry: z.custom<StepRetryPolicy['shouldRetry']>(isFunction, 'must be a function').optional(),
  maxRetryAfterMs: durationMsSchema.optional(),
});

/** The controls of `policy` checked; throws `InvalidInputError` naming the field. */
export function checkedRetryControls(policy: StepRetryPolicy, where: string): StepRetryPolicy {
  const { nonRetryable, shouldRetry, maxRetryAfterMs } = policy;
  if (nonRetryable === undefined && shouldRetry === undefined && maxRetryAfterMs === undefined) return {};
  const checked = parseWith(controlsSchema, { nonRetryable, shouldRetry, maxRetryAfterMs }, where, 'retry');
  return Object.fromEntries(
    Object.entries(checked).filter(([, value]) => value !== undefined),
  ) as StepRetryPolicy;
}

/**
 * Decide about attempt `attempt`, the `budgetUsed`-th failure counted against the budget.
 * `unretryable` is the runtime's own verdict (an error no retry can fix).
 */
export function decideRetry(
  policy: StepRetryPolicy,
  resolved: ResolvedRetryPolicy,
  error: unknown,
  attempt: number,
  budgetUsed: number,
  unretryable: boolean,
  key: string,
): RetryDecision {
  if (unretryable || matchesNonRetryable(policy.nonRetryable, error))
    return { retry: false, reason: 'non-retryable' };
  if (budgetUsed >= resolved.maxAttempts) return { retry: false, reason: 'budget' };
  if (policy.shouldRetry !== undefined) {
    try {
      if (policy.shouldRetry(error, attempt) !== true) return { retry: false, reason: 'should-retry' };
    } catch (thrown) {
      return { retry: false, reason: 'should-retry-threw', thrown: describeThrown(thrown) };
    }
  }
  const asked = retryAfterOf(error);
  if (asked === undefined) return { retry: true, delayMs: retryDelay(resolved, budgetUsed, key) };
  return { retry: true, delayMs: Math.min(asked, policy.maxRetryAfterMs ?? asked), retryAfterMs: asked };
}

/** The error's own `retryAfterMs`, when it is a whole-able number of ms >= 0 (else the backoff decides). */
function retryAfterOf(error: unknown): number | undefined {
  try {
    const asked = (error as { retryAfterMs?: unknown } | null)?.retryAfterMs;
    if (typeof asked !== 'number' || !Number.isFinite(asked) || asked < 0) return undefined;
    return Math.ceil(asked);
  } catch {
    return undefined; // a throwing getter or a revoked proxy asks for nothing
  }
}

function matchesNonRetryable(list: StepRetryPolicy['nonRetryable'], error: unknown): boolean {
  if (list === undefined || list.length === 0) return false;
  try {
    const names = namesOf(error);
    return list.some((entry) =>
      typeof entry === 'string'
        ? names.includes(entry)
        : error instanceof (entry as abstract new () => Error),
    );
  } catch {
    return false; // an error that cannot be inspected matches no entry: the budget decides
  }
}

/** `error.name` and the constructor names along its prototype chain. */
function namesOf(error: unknown): string[] {
  if (typeof error !== 'object' || error === null) return [];
  const names: string[] = [];
  const own = (error as { name?: unknown }).name;
  if (typeof own === 'string') names.push(own);
  for (let proto = Object.getPrototypeOf(error); proto !== null; proto = Object.getPrototypeOf(proto)) {
    const name = (proto as { constructor?: { name?: unknown } }).constructor?.name;
    if (typeof name === 'string' && name !== 'Object') names.push(name);
  }
  return names;
}
