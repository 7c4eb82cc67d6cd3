/**
 * U+0000 and PostgreSQL `text`: a value to be stored that holds one is refused before anything
 * is sent; a key that only selects rows and holds one cannot match any row, so the caller gets
 * the not-found answer without a round trip (as the event store's `read` and `getExecution` do).
 */
import { NulInTextError } from './errors.js';

/** True when `text` holds U+0000, which no `text` column can store. */
export function hasNul(text: string): boolean {
  return text.includes('\u0000');
}

/**
 * Throw {@link NulInTextError} for the first of `values` (field name to text) that holds U+0000.
 * @param operation the store call, named as in `Database.query` (e.g. `timers.schedule`).
 * @param executionId the execution the values belong to, if any.
 */
export function refuseNul(
  operation: string,
  executionId: string | undefined,
  values: Readonly<Record<string, string>>,
): void {
  for (const [field, text] of Object.entries(values))
    if (hasNul(text)) throw new NulInTextError(executionId, field, operation);
}
