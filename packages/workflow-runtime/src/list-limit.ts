/** The page-size check every `EventStore.listExecutions` shares, so stores refuse alike. */
import { InvalidInputError } from './errors.js';

/** Page size of `listExecutions` when the query gives none. */
export const DEFAULT_LIST_LIMIT = 100;

/**
 * The page size of a `listExecutions` query: `limit` when it is an integer >= 1, else
 * {@link DEFAULT_LIST_LIMIT} when absent. Throws `InvalidInputError` naming `query.limit`
 * for 0, a negative or a fractional limit (a page of nothing could never advance its cursor).
 */
export function listLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_LIST_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new InvalidInputError('listExecutions query', [
      { path: 'query.limit', message: `must be an integer >= 1, got ${limit}` },
    ]);
  }
  return limit;
}
