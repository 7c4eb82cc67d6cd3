/**
 * The caller's trace across the HTTP worker and the broker (docs/operating.md): the
 * dispatching side sends `callerTraceparent(executionId)` with each request (the caller's
 * active span, or else the execution's own span), and the worker adopts it for the run
 * (`CallerContexts.adopt`, its `onTraceparent`), so the steps and signals the run reports are
 * children of the caller's span, in the caller's trace. Over the outbox, the enqueuing
 * runtime writes `callerTraceHeaders(executionId)` with the `execution.pending` message
 * (`outboxHeaders`), and the Supervisor that hears of it adopts them the same way. Span ids
 * stay derived from the execution id.
 */
import {
  type Context,
  context,
  createTraceState,
  ROOT_CONTEXT,
  type SpanContext,
  trace,
} from '@opentelemetry/api';
import { traceparentOf } from './ids.js';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The W3C `traceparent` of a span context. */
export function traceparentOfSpan(span: SpanContext): string {
  return `00-${span.traceId}-${span.spanId}-${(span.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/**
 * The `traceparent` to send with an execution's requests: the active span's, when there is
 * one (a context manager must be registered, as `NodeTracerProvider.register()` does), or
 * else the execution's own span's (`traceparentOf`). Pass as `RemoteWorkerRuntime`'s `traceparent`.
 */
export function callerTraceparent(executionId: string): string {
  const active = trace.getSpanContext(context.active());
  return active !== undefined && trace.isSpanContextValid(active)
    ? traceparentOfSpan(active)
    : traceparentOf(executionId);
}

/**
 * The W3C trace context headers to write with an execution's outbox message: `traceparent`
 * (as {@link callerTraceparent}) and, when the active span has one, `tracestate`. Pass as
 * `createRuntime({ outbox: true, outboxHeaders: callerTraceHeaders })`; a
 * `Supervisor({ onTraceparent: callers.adopt })` that hears of the execution continues the trace.
 */
export function callerTraceHeaders(executionId: string): { traceparent: string; tracestate?: string } {
  const active = trace.getSpanContext(context.active());
  if (active === undefined || !trace.isSpanContextValid(active))
    return { traceparent: traceparentOf(executionId) };
  const tracestate = active.traceState?.serialize();
  return {
    traceparent: traceparentOfSpan(active),
    ...(tracestate === undefined || tracestate === '' ? {} : { tracestate }),
  };
}

/** The remote span context of a well-formed `traceparent` (with its `tracestate`, if given), or undefined. */
export function spanContextOf(traceparent: string, tracestate?: string): SpanContext | undefined {
  const match = TRACEPARENT.exec(traceparent);
  if (match === null) return undefined;
  const span: SpanContext = {
    traceId: match[1]!,
    spanId: match[2]!,
    traceFlags: Number.parseInt(match[3]!, 16),
    isRemote: true,
  };
  if (tracestate !== undefined && tracestate !== '') span.traceState = createTraceState(tracestate);
  return trace.isSpanContextValid(span) ? span : undefined;
}

/**
 * The callers' contexts of the runs in progress on this worker, by execution id: what the
 * worker adopted (`adopt`, the HTTP worker's `onTraceparent`) and the observer reads
 * (`otelObserver({ callers })`).
 * @example
 * const callers = new CallerContexts();
 * const runtime = createRuntime({ stores, workflows, observers: [otelObserver({ tracer, callers })] });
 * const worker = createHttpWorker({ runtime, secret, onTraceparent: callers.adopt });
 */
export class CallerContexts {
  private readonly byExecution = new Map<string, { context: Context }>();

  /**
   * Adopt `traceparent` (and `tracestate`) for the run of `executionId`; returns what forgets it
   * (the run's end). The HTTP worker's `onTraceparent` and the Supervisor's take it as it is.
   */
  readonly adopt = (
    executionId: string,
    traceparent: string,
    tracestate?: string,
  ): (() => void) | undefined => {
    const span = spanContextOf(traceparent, tracestate);
    if (span === undefined) return undefined;
    const entry = { context: trace.setSpanContext(ROOT_CONTEXT, span) };
    this.byExecution.set(executionId, entry);
    return () => {
      if (this.byExecution.get(executionId) === entry) this.byExecution.delete(executionId);
    };
  };

  /** The adopted caller context of a run in progress, if any. */
  contextOf(executionId: string): Context | undefined {
    return this.byExecution.get(executionId)?.context;
  }
}
