/**
 * @skein/opentelemetry: `otelObserver({ tracer })`, a `RuntimeObserver` that turns executions,
 * steps and signals into OpenTelemetry spans whose ids derive from execution ids.
 */
export {
  CallerContexts,
  callerTraceHeaders,
  callerTraceparent,
  spanContextOf,
  traceparentOfSpan,
} from './caller-context.js';
export {
  executionSpanIdOf,
  type SpanIdGenerator,
  signalSpanIdOf,
  skeinIdGenerator,
  stepSpanIdOf,
  traceIdOf,
  traceparentOf,
} from './ids.js';
export { type OtelObserverOptions, otelObserver, SkeinAttributes } from './otel-observer.js';
