/**
 * Span and trace ids derived from execution ids (SHA-256), so every process that reports a
 * part of an execution (the first run, a recovery elsewhere, the HTTP worker) puts it in the
 * same trace under the same parent, and a step attempt re-run after a crash keeps its span id.
 * `skeinIdGenerator` is the tracer provider's id generator: it hands out the id the observer
 * primed for the span being started, and random ids for every other span.
 */
import { createHash, randomBytes } from 'node:crypto';

function hex(text: string, bytes: number): string {
  return createHash('sha256')
    .update(text)
    .digest('hex')
    .slice(0, bytes * 2);
}

/** Trace id (32 hex digits) of an execution. */
export function traceIdOf(executionId: string): string {
  return hex(`skein/trace/${executionId}`, 16);
}

/**
 * Span id (16 hex digits) of an execution's `skein.execution` span; after `redrive` operator
 * resumes (`runtime.resume`), of the span of the run that resume started (each resumed run
 * settles once more, with a span of its own).
 */
export function executionSpanIdOf(executionId: string, redrive = 0): string {
  return redrive === 0
    ? hex(`skein/execution/${executionId}`, 8)
    : hex(`skein/execution/${executionId}/redrive/${redrive}`, 8);
}

/** Span id of one attempt of the step at `position`. */
export function stepSpanIdOf(executionId: string, position: number, attempt: number): string {
  return hex(`skein/step/${executionId}/${position}/${attempt}`, 8);
}

/** Span id of the signal received at `position`. */
export function signalSpanIdOf(executionId: string, position: number): string {
  return hex(`skein/signal/${executionId}/${position}`, 8);
}

/** The W3C `traceparent` of an execution's span: `00-<trace>-<span>-01`. */
export function traceparentOf(executionId: string): string {
  return `00-${traceIdOf(executionId)}-${executionSpanIdOf(executionId)}-01`;
}

/** The shape of the SDK's `IdGenerator` (@opentelemetry/sdk-trace-base). */
export interface SpanIdGenerator {
  generateTraceId(): string;
  generateSpanId(): string;
}

let primed: { traceId: string; spanId: string } | undefined;

/**
 * Give the next span started (synchronously, right after this call) these ids. Only the
 * observer calls it, immediately before `tracer.startSpan`.
 */
export function primeIds(traceId: string, spanId: string): void {
  primed = { traceId, spanId };
}

/** Forget the primed ids once the span is started (the SDK asks for both, in either order). */
export function unprime(): void {
  primed = undefined;
}

/**
 * Pass as `idGenerator` to the tracer provider: `new BasicTracerProvider({ idGenerator: skeinIdGenerator, … })`.
 * @example
 * const provider = new NodeTracerProvider({ idGenerator: skeinIdGenerator, spanProcessors: [processor] });
 */
export const skeinIdGenerator: SpanIdGenerator = {
  generateTraceId: () => primed?.traceId ?? randomBytes(16).toString('hex'),
  generateSpanId: () => primed?.spanId ?? randomBytes(8).toString('hex'),
};
