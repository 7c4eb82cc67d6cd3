/** Deciding whether an error is a superseded refusal (docs/architecture.md#dispatch). */

// ExecutionSupersededError is the dispatcher's own verdict; an outer dispatcher keeps it.
const SUPERSEDING = new Set(['ExecutionAlreadyExistsError', 'StaleFenceError', 'ExecutionSupersededError']);

/**
 * True when `error` means another holder owns `executionId`: an `ExecutionAlreadyExistsError`
 * or a `StaleFenceError` naming this execution, bare or as the `cause` of a
 * `StorageWriteError` (and an `ExecutionSupersededError` about it). Matches by error `name` and by id, never by class, so
 * errors from another copy of the package (or rebuilt from the wire) are recognised.
 * `StartFencedOutError` is not one: the start never happened, and is retried.
 * @example
 * if (isSupersededRefusal(err, pkg.executionId)) throw new ExecutionSupersededError(pkg.executionId, { cause: err });
 */
export function isSupersededRefusal(error: unknown, executionId: string): boolean {
  if (names(error, executionId) && SUPERSEDING.has(nameOf(error))) return true;
  if (nameOf(error) === 'StorageWriteError') {
    const cause = (error as { cause?: unknown }).cause;
    return nameOf(cause) === 'StaleFenceError' && names(cause, executionId);
  }
  return false;
}

function nameOf(error: unknown): string {
  return typeof error === 'object' && error !== null && typeof (error as { name?: unknown }).name === 'string'
    ? (error as { name: string }).name
    : '';
}

function names(error: unknown, executionId: string): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { executionId?: unknown }).executionId === executionId
  );
}
