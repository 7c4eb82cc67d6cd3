/**
 * The retry backoff every transport and the outbox publisher share (adr/0061): exponential
 * with a cap and "equal jitter". The ceiling of attempt `n` is `min(maxMs, initialMs·2^(n−1))`
 * and the delay is drawn uniformly from its upper half, so a retry never comes back at once
 * (at least half the ceiling), never later than the ceiling, and retries that failed
 * together (a broker that went away) spread out instead of coming back in one burst.
 */

/** A backoff: the first ceiling and the largest one, in ms. */
export interface RetryBackoff {
  initialMs: number;
  maxMs: number;
}

/** The ceiling of the delay before retry number `attempt` (1 = after the first failure). */
export function backoffCeiling(attempt: number, backoff: RetryBackoff): number {
  const exponent = Math.max(0, Math.min(attempt, 64) - 1);
  return Math.max(0, Math.min(backoff.maxMs, backoff.initialMs * 2 ** exponent));
}

/**
 * The delay before retry number `attempt`: from `[ceiling / 2, ceiling]`, whole ms.
 * @param random a number in `[0, 1)` (default: `Math.random`)
 */
export function retryDelay(
  attempt: number,
  backoff: RetryBackoff,
  random: () => number = Math.random,
): number {
  const ceiling = backoffCeiling(attempt, backoff);
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}

/** Problems of a backoff option named `path` (empty when it is sound). */
export function backoffIssues(path: string, backoff: RetryBackoff): { path: string; message: string }[] {
  const issues: { path: string; message: string }[] = [];
  if (!Number.isSafeInteger(backoff.initialMs) || backoff.initialMs < 1)
    issues.push({ path: `${path}.initialMs`, message: `must be an integer >= 1, got ${backoff.initialMs}` });
  if (!Number.isSafeInteger(backoff.maxMs) || backoff.maxMs < backoff.initialMs)
    issues.push({
      path: `${path}.maxMs`,
      message: `must be an integer >= initialMs (${backoff.initialMs}), got ${backoff.maxMs}`,
    });
  return issues;
}
