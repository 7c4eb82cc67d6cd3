/**
 * W3C `traceparent` over the HTTP worker, on real loopback HTTP with a real SQLite file, each
 * side with its own tracer provider and in-memory exporter: a step run on the remote worker
 * is a child of the caller's span, in the caller's trace; without a caller context (or with a
 * malformed one) it stays under its execution's span, in the execution's trace.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import {
  CallerContexts,
  callerTraceparent,
  executionSpanIdOf,
  otelObserver,
  spanContextOf,
  stepSpanIdOf,
  traceIdOf,
  traceparentOf,
  traceparentOfSpan,
} from '@skein/opentelemetry';
import { openSqliteStores } from '@skein/store-sqlite';
import { createHttpWorker, RemoteWorkerRuntime } from '@skein/worker-runtime-http';
import { LocalDispatcher } from '@skein/worker-runtime-local';
import { createRuntime, defineWorkflow } from '@skein/workflow-runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { tracing } from './support/tracing.js';

const SECRET = 'a-test-secret-of-at-least-32-bytes!!';
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const ship = defineWorkflow({
  name: 'ship',
  input: z.object({ sku: z.string() }),
  async run(ctx, input) {
    const box = await ctx.step('pack', () => `box:${input.sku}`);
    return ctx.step('label', () => `${box}:labelled`);
  },
});

/** A worker on 127.0.0.1 whose runtime reports to its own exporter, and a client of it. */
async function remoteWorker(traceparent?: (executionId: string) => string | undefined) {
  const dir = mkdtempSync(join(tmpdir(), 'skein-otel-http-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const stores = openSqliteStores({ path: join(dir, 'skein.db') });
  cleanups.push(() => stores.close());
  const worker = tracing(cleanups);
  const callers = new CallerContexts();
  const runtime = createRuntime({
    stores,
    workflows: [ship],
    observers: [otelObserver({ tracer: worker.tracer, callers })],
    maintenance: false,
    onError: () => undefined,
  });
  cleanups.push(() => runtime.close());
  const http = createHttpWorker({ runtime, secret: SECRET, onTraceparent: callers.adopt });
  const url = await http.listen();
  cleanups.push(() => http.close());
  const client = new RemoteWorkerRuntime({ url, secret: SECRET, ...(traceparent ? { traceparent } : {}) });
  const dispatcher = new LocalDispatcher({ workers: client, executeTimeoutMs: 10_000 });
  return { dispatcher, exporter: worker.exporter, callers };
}

const steps = (spans: ReadableSpan[]) => spans.filter((span) => span.name === 'skein.step');

describe('traceparent over the HTTP worker', () => {
  it("a step run on the remote worker is a child of the caller's span, in the caller's trace", async () => {
    const caller = tracing(cleanups);
    const request = caller.tracer.startSpan('caller.request');
    const sent: string[] = [];
    const remote = await remoteWorker((executionId) => {
      const tp = traceparentOfSpan(request.spanContext());
      sent.push(`${executionId} ${tp}`);
      return tp;
    });
    const state = await remote.dispatcher.dispatch({
      executionId: 'ship-1',
      workflow: 'ship',
      input: { sku: 'a' },
    });
    request.end();
    expect(state.status).toBe('completed');
    expect(sent.length).toBeGreaterThanOrEqual(1);
    const spans = steps(remote.exporter.getFinishedSpans());
    expect(spans.map((s) => s.attributes['skein.step.name'])).toEqual(['pack', 'label']);
    const { traceId, spanId } = request.spanContext();
    for (const span of spans) {
      expect(span.spanContext().traceId).toBe(traceId);
      expect(span.parentSpanContext?.spanId).toBe(spanId);
    }
    // The span ids stay derived: a redispatch of the same attempt reports the same span.
    for (const span of spans) {
      const position = Number(span.attributes['skein.step.position']);
      expect(span.spanContext().spanId).toBe(stepSpanIdOf('ship-1', position, 1));
    }
    // The caller context was the run's only: nothing stays adopted once it ended.
    expect(remote.callers.contextOf('ship-1')).toBeUndefined();
  });

  it("without a caller span, callerTraceparent sends the execution's own: the steps stay under the execution span", async () => {
    const remote = await remoteWorker(callerTraceparent);
    expect(callerTraceparent('ship-2')).toBe(traceparentOf('ship-2'));
    await remote.dispatcher.dispatch({ executionId: 'ship-2', workflow: 'ship', input: { sku: 'b' } });
    const spans = steps(remote.exporter.getFinishedSpans());
    expect(spans).toHaveLength(2);
    for (const span of spans) {
      expect(span.spanContext().traceId).toBe(traceIdOf('ship-2'));
      expect(span.parentSpanContext?.spanId).toBe(executionSpanIdOf('ship-2'));
    }
  });

  it('a malformed traceparent is not sent, and a worker ignores one: the steps stay in the execution trace', async () => {
    const remote = await remoteWorker(() => '00-not-a-trace-01');
    await remote.dispatcher.dispatch({ executionId: 'ship-3', workflow: 'ship', input: { sku: 'c' } });
    for (const span of steps(remote.exporter.getFinishedSpans()))
      expect(span.spanContext().traceId).toBe(traceIdOf('ship-3'));
    expect(spanContextOf('00-00000000000000000000000000000000-0000000000000000-01')).toBeUndefined();
    expect(spanContextOf(traceparentOf('x'))).toMatchObject({ traceId: traceIdOf('x'), isRemote: true });
  });
});
