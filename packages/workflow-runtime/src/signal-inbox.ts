/**
 * What every `SignalStore` shares: the defaults of `send` and `pending` and the checks of
 * their numeric options, so stores bound and refuse alike.
 */
import { InvalidInputError } from './errors.js';
import type { PendingSignalsQuery, SendSignalOptions } from './spi.js';

/** Most signals one execution may have waiting when `send` is given no `maxPending`. */
export const DEFAULT_MAX_PENDING_SIGNALS = 10_000;

/** Page size of `SignalStore.pending` when the query gives none. */
export const DEFAULT_PENDING_LIMIT = 100;

/**
 * The inbox bound of a `send`: `options.maxPending` when it is an integer >= 1, else
 * {@link DEFAULT_MAX_PENDING_SIGNALS} when absent. Throws `InvalidInputError` naming the option.
 */
export function maxPendingOf(options: SendSignalOptions | undefined): number {
  return positiveInteger(
    options?.maxPending,
    DEFAULT_MAX_PENDING_SIGNALS,
    'signals.send',
    'options.maxPending',
  );
}

/**
 * The page size of a `pending` query: `query.limit` when it is an integer >= 1, else
 * {@link DEFAULT_PENDING_LIMIT} when absent. Throws `InvalidInputError` naming `query.limit`.
 */
export function pendingLimitOf(query: PendingSignalsQuery | undefined): number {
  return positiveInteger(query?.limit, DEFAULT_PENDING_LIMIT, 'signals.pending', 'query.limit');
}

function positiveInteger(value: number | undefined, fallback: number, where: string, path: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1)
    throw new InvalidInputError(where, [{ path, message: `must be an integer >= 1, got ${value}` }]);
  return value;
}
