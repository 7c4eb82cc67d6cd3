/**
 * W3C Trace Context over the worker's requests (docs/remote.md): the client sends the
 * caller's `traceparent` with each request of an execution, and the worker hands it to its
 * `onTraceparent` hook for the run, so spans a remote run reports join the caller's trace.
 * A malformed or absent header is ignored, as the W3C recommendation asks of a receiver.
 */

/** The request header that carries the caller's trace context. */
export const TRACEPARENT_HEADER = 'traceparent';

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** `value` when it is a well-formed version-00 `traceparent` (ids not all zero), else undefined. */
export function wellFormedTraceparent(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const match = TRACEPARENT.exec(value.trim());
  if (match === null) return undefined;
  const [, version, traceId, spanId] = match;
  if (version !== '00' || /^0+$/.test(traceId!) || /^0+$/.test(spanId!)) return undefined;
  return value.trim();
}
