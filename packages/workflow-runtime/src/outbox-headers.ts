/**
 * Headers of the messages `enqueue` writes to the outbox (docs/outbox.md#headers): a runtime
 * created with `outbox: true` and `outboxHeaders` asks the hook, right before seq 0 is written,
 * which headers the execution's `execution.pending` message carries (the enqueuer's W3C trace
 * context, `callerTraceHeaders` of `@skein/opentelemetry`), and writes them with the message
 * in the same append (O1). A hook that throws writes none: tracing never fails an enqueue.
 */
import { InvalidInputError } from './errors.js';
import { checkOutboxHeaders } from './outbox.js';

/** Asked for the headers of an enqueued execution's `execution.pending` message; undefined for none. */
export type OutboxHeadersHook = (executionId: string) => Readonly<Record<string, string>> | undefined;

/** The `outboxHeaders` option, checked: a function, and only with `outbox: true` (else `InvalidInputError`). */
export function checkOutboxHeadersOption(options: {
  outbox?: unknown;
  outboxHeaders?: unknown;
}): OutboxHeadersHook | undefined {
  const hook = options.outboxHeaders;
  if (hook === undefined) return undefined;
  if (typeof hook !== 'function')
    throw new InvalidInputError('createRuntime options', [
      { path: 'outboxHeaders', message: `must be a function, got ${typeof hook}` },
    ]);
  if (options.outbox !== true)
    throw new InvalidInputError('createRuntime options', [
      { path: 'outboxHeaders', message: 'is set, but outbox is not true: no message would carry them' },
    ]);
  return hook as OutboxHeadersHook;
}

/**
 * The hook's headers for `executionId`; none when it throws (reported to `onError`). Ill-formed
 * ones throw `InvalidInputError` naming the header, before anything is written (L7).
 */
export function outboxHeadersOf(
  hook: OutboxHeadersHook | undefined,
  executionId: string,
  onError: (error: unknown, context: string) => void,
): { headers?: Readonly<Record<string, string>> } {
  if (hook === undefined) return {};
  let headers: Readonly<Record<string, string>> | undefined;
  try {
    headers = hook(executionId);
  } catch (error) {
    onError(error, `outboxHeaders threw for execution "${executionId}": its message goes without headers`);
    return {};
  }
  if (headers === undefined) return {};
  checkOutboxHeaders(headers, `outboxHeaders of execution "${executionId}"`);
  return { headers };
}
