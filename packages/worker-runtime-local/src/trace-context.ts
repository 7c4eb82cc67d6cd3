/**
 * The enqueuer's W3C trace context on the consuming side (docs/outbox.md#headers): an
 * `execution.pending` message carries the `traceparent` (and `tracestate`) the enqueuing
 * runtime's `outboxHeaders` wrote, and a `Supervisor({ onTraceparent })` hands them to its
 * hook before it runs the execution it heard of, as the HTTP worker does with the header of a
 * request; what the hook returns is called when that run ends. A malformed or absent
 * `traceparent` is ignored, and a hook that throws is reported: tracing never fails a run.
 */

/** Told the trace context a heard message carried; returns what forgets it when the run ends. */
export type TraceparentHook = (
  executionId: string,
  traceparent: string,
  tracestate?: string,
) => (() => void) | undefined;

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;
/** W3C tracestate: at most 512 characters of list members (printable ASCII). */
const TRACESTATE = /^[\x20-\x7e]{1,512}$/;

/** Hand a message's trace context to `hook`; returns the hook's forget function, if any. */
export function adoptTraceContext(
  hook: TraceparentHook | undefined,
  executionId: string,
  headers: Readonly<Record<string, string>> | undefined,
  onError: (error: unknown, context: string) => void,
): (() => void) | undefined {
  const traceparent = headers?.traceparent;
  if (hook === undefined || traceparent === undefined) return undefined;
  const match = TRACEPARENT.exec(traceparent);
  if (match === null || /^0+$/.test(match[1]!) || /^0+$/.test(match[2]!)) return undefined;
  const tracestate = headers?.tracestate;
  try {
    return tracestate !== undefined && TRACESTATE.test(tracestate)
      ? hook(executionId, traceparent, tracestate)
      : hook(executionId, traceparent);
  } catch (error) {
    onError(
      error,
      `supervisor: onTraceparent threw for execution "${executionId}" (it runs without the trace)`,
    );
    return undefined;
  }
}
