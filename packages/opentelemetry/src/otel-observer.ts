/**
 * `otelObserver`: a `RuntimeObserver` that emits `skein.execution`, `skein.step` and
 * `skein.signal` spans. Ids come from the execution id (ids.ts): a step attempt's span is the
 * child of its execution's span in the execution's trace, whichever process ran it; the
 * execution span itself is emitted once, when the execution settles (start: seq 0's time), so
 * a recovery never duplicates it, and a replayed step, which the runtime does not report,
 * emits nothing.
 */
import {
  type Attributes,
  type Context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import type {
  ObservedExecution,
  ObservedSettlement,
  ObservedStepEnd,
  RuntimeObserver,
} from '@skein/workflow-runtime';
import type { CallerContexts } from './caller-context.js';
import { executionSpanIdOf, primeIds, signalSpanIdOf, stepSpanIdOf, traceIdOf, unprime } from './ids.js';

/** Attribute names of the spans (semantic: `workflow.*`; Skein's own: `skein.*`). */
export const SkeinAttributes = {
  workflowId: 'workflow.id',
  workflowName: 'workflow.name',
  workflowVersion: 'skein.workflow.version',
  stepName: 'skein.step.name',
  stepAttempt: 'skein.step.attempt',
  stepPosition: 'skein.step.position',
  stepOutcome: 'skein.step.outcome',
  fence: 'skein.fence',
  status: 'skein.execution.status',
  signalName: 'skein.signal.name',
  signalId: 'skein.signal.id',
  redrives: 'skein.execution.redrives',
} as const;

/** Options of {@link otelObserver}. */
export interface OtelObserverOptions {
  /** The tracer to start spans with; its provider should use `skeinIdGenerator`. */
  tracer: Tracer;
  /**
   * Told once when a span did not get its derived id (the provider does not use
   * `skeinIdGenerator`): spans are then still emitted, with random ids (default: `console.warn`).
   */
  onMisconfigured?: (message: string) => void;
  /**
   * The callers' contexts a worker adopted (`CallerContexts`): while one is adopted for an
   * execution, its steps and signals are children of the caller's span, in the caller's
   * trace (default: none; they are children of the execution's span).
   */
  callers?: CallerContexts;
}

/**
 * Spans for a runtime's executions, steps and signals.
 * @example
 * const provider = new NodeTracerProvider({ idGenerator: skeinIdGenerator, spanProcessors: [processor] });
 * const runtime = createRuntime({ stores, workflows, observers: [otelObserver({ tracer: provider.getTracer('skein') })] });
 */
export function otelObserver(options: OtelObserverOptions): RuntimeObserver {
  const { tracer } = options;
  const warn = options.onMisconfigured ?? ((message: string) => console.warn(`skein: ${message}`));
  let warned = false;
  const steps = new Map<string, Span>();

  const start = (
    name: string,
    spanId: string,
    traceId: string,
    at: number,
    attributes: Attributes,
    parent: Context,
    links?: { traceId: string; spanId: string }[],
  ) => {
    primeIds(traceId, spanId);
    const span = tracer.startSpan(
      name,
      {
        kind: SpanKind.INTERNAL,
        startTime: at,
        attributes,
        ...(links === undefined
          ? {}
          : {
              links: links.map((l) => ({
                context: { ...l, traceFlags: TraceFlags.SAMPLED, isRemote: true },
              })),
            }),
      },
      parent,
    );
    unprime();
    if (!warned && span.isRecording() && span.spanContext().spanId !== spanId) {
      warned = true;
      warn(
        'span ids are not derived from execution ids: create the tracer provider with { idGenerator: skeinIdGenerator }',
      );
    }
    return span;
  };

  /**
   * The parent of an execution's steps and signals: the caller's span a worker adopted for
   * the run, or else the execution's span (which itself comes at the end).
   */
  const underExecution = (executionId: string): Context =>
    options.callers?.contextOf(executionId) ??
    trace.setSpanContext(ROOT_CONTEXT, {
      traceId: traceIdOf(executionId),
      spanId: executionSpanIdOf(executionId),
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
    });

  const base = (e: ObservedExecution): Attributes => ({
    [SkeinAttributes.workflowId]: e.executionId,
    [SkeinAttributes.workflowName]: e.workflow,
    [SkeinAttributes.workflowVersion]: e.version,
    [SkeinAttributes.fence]: e.fence,
  });

  return {
    stepStarted(e) {
      const key = `${e.executionId}#${e.position}#${e.attempt}`;
      steps.get(key)?.end(); // a leftover of an attempt this process lost track of
      const span = start(
        'skein.step',
        stepSpanIdOf(e.executionId, e.position, e.attempt),
        traceIdOf(e.executionId),
        e.at,
        {
          ...base(e),
          [SkeinAttributes.stepName]: e.name,
          [SkeinAttributes.stepAttempt]: e.attempt,
          [SkeinAttributes.stepPosition]: e.position,
        },
        underExecution(e.executionId),
      );
      steps.set(key, span);
    },
    stepSettled(e: ObservedStepEnd) {
      const key = `${e.executionId}#${e.position}#${e.attempt}`;
      const span =
        steps.get(key) ??
        start(
          'skein.step',
          stepSpanIdOf(e.executionId, e.position, e.attempt),
          traceIdOf(e.executionId),
          e.startedAt ?? e.at,
          {
            ...base(e),
            [SkeinAttributes.stepName]: e.name,
            [SkeinAttributes.stepAttempt]: e.attempt,
            [SkeinAttributes.stepPosition]: e.position,
          },
          underExecution(e.executionId),
        );
      steps.delete(key);
      span.setAttribute(SkeinAttributes.stepOutcome, e.outcome);
      if (e.error !== undefined) {
        span.addEvent(
          'exception',
          { 'exception.type': e.error.name, 'exception.message': e.error.message },
          e.at,
        );
        span.setStatus({ code: SpanStatusCode.ERROR, message: e.error.message });
      }
      span.end(e.at);
    },
    signalReceived(e) {
      start(
        'skein.signal',
        signalSpanIdOf(e.executionId, e.position),
        traceIdOf(e.executionId),
        e.at,
        { ...base(e), [SkeinAttributes.signalName]: e.name, [SkeinAttributes.signalId]: e.signalId },
        underExecution(e.executionId),
      ).end(e.at);
    },
    executionSettled(e: ObservedSettlement) {
      // A resumed run settles again: its span is its own (from the resume on), linked to the
      // span of the run it resumed, so a trace never holds two spans with one id.
      const redrive = e.redriven?.count ?? 0;
      const links: { traceId: string; spanId: string }[] = [];
      if (e.parentId !== undefined)
        links.push({ traceId: traceIdOf(e.parentId), spanId: executionSpanIdOf(e.parentId) });
      if (redrive > 0)
        links.push({
          traceId: traceIdOf(e.executionId),
          spanId: executionSpanIdOf(e.executionId, redrive - 1),
        });
      const span = start(
        'skein.execution',
        executionSpanIdOf(e.executionId, redrive),
        traceIdOf(e.executionId),
        e.redriven?.at ?? e.startedAt,
        {
          ...base(e),
          [SkeinAttributes.status]: e.status,
          ...(redrive > 0 ? { [SkeinAttributes.redrives]: redrive } : {}),
        },
        ROOT_CONTEXT,
        links.length === 0 ? undefined : links,
      );
      if (e.status === 'failed' || e.status === 'dead_lettered')
        span.setStatus({ code: SpanStatusCode.ERROR, message: e.error?.message ?? e.reason ?? e.status });
      span.end(e.at);
    },
  };
}
