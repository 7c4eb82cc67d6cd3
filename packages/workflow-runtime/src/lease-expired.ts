/** The ready predicate for `recoverAbandoned`: an execution whose lease expired (adr/0006). */
import { optionalPositiveMs } from './durations.js';
import { DEFAULT_LEASE_TTL_MS, executionLeaseKey } from './leases.js';
import type { AbandonedPredicate } from './recover-abandoned.js';
import type { ExecutionSummary, Stores } from './spi.js';

/** Options of {@link leaseExpired}. */
export interface LeaseExpiredOptions {
  /**
   * For an execution with no lease row: abandoned once its newest event is older than this
   * (default: 30 000, the runtime's default lease TTL).
   */
  ttlMs?: number;
  /** Milliseconds since the epoch (default: `Date.now`). */
  clock?: () => number;
}

/**
 * True for an execution whose owner stopped renewing its lease: the lease row expired and no
 * event was written since its last claim; or, with no row or an event newer than the row's
 * last claim, the newest event is older than `ttlMs` (a runtime with leases off, a run that
 * has not reached its first renewal tick, a crash before it). Share the store only with
 * runtimes that keep leases, or a leases-off runtime's step longer than `ttlMs` is taken over
 * (adr/0006).
 * @example
 * await recoverAbandoned(runtime, { isAbandoned: leaseExpired(stores) });
 */
export function leaseExpired(
  stores: Pick<Stores, 'leases'>,
  options: LeaseExpiredOptions = {},
): AbandonedPredicate {
  const ttlMs = optionalPositiveMs(options.ttlMs, 'leaseExpired options', 'ttlMs') ?? DEFAULT_LEASE_TTL_MS;
  const clock = options.clock ?? Date.now;
  return async (execution: ExecutionSummary) => {
    // Written within the TTL: alive whatever its row says (either way below needs the newest
    // event, or the row's expiry, to be older than `ttlMs` ago), so its row is not read: a
    // recovery pass over many running executions reads only the quiet ones' rows (adr/0091).
    if (clock() - execution.updatedAt < ttlMs) return false;
    const lease = await stores.leases.get(executionLeaseKey(execution.executionId));
    const now = clock();
    // An event newer than the row's last claim (`expiresAt - ttlMs`) was written after it: by a
    // holder that has not claimed the row yet (a takeover claims at its first renewal tick,
    // adr/0006). Judge such an execution, like one without a row, by its newest event.
    if (lease === null || execution.updatedAt > lease.expiresAt - ttlMs)
      return now - execution.updatedAt > ttlMs;
    return lease.expiresAt <= now;
  };
}
