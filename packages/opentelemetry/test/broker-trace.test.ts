/**
 * W3C trace context over the outbox and the broker: the enqueuing runtime writes the caller's
 * `traceparent` and `tracestate` with the `execution.pending` message (`outboxHeaders`, in the
 * append of seq 0), the message travels through the real RabbitMQ (relayed by an
 * `OutboxPublisher`, carried as AMQP headers) or through a `StoreTransport`, and the
 * `Supervisor` that hears of it adopts them for the run (`onTraceparent: callers.adopt`): the
 * steps are children of the enqueuer's span, in its trace, one coherent trace from enqueue to
 * run. Two simulated processes on one real SQLite file, each with its own tracer provider.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import {
  CallerContexts,
  callerTraceHeaders,
  executionSpanIdOf,
  otelObserver,
  stepSpanIdOf,
  traceIdOf,
  traceparentOf,
  traceparentOfSpan,
} from '@skein/opentelemetry';
import { openSqliteStores } from '@skein/store-sqlite';
import type { Transport } from '@skein/worker-runtime';
import { OutboxPublisher, StoreTransport, Supervisor } from '@skein/worker-runtime-local';
import { createRuntime, defineWorkflow, type OutboxHeadersHook, type Stores } from '@skein/workflow-runtime';
import { EXECUTION_PENDING_TOPIC } from '@skein/workflow-runtime/spi';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  connectTransport,
  deleteTopology,
  freshPrefix,
  whenAmqp,
} from '../../broker-amqp/test/support/amqp.js';
import { tracing } from './support/tracing.js';

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

/** One SQLite file; `connect()` opens a connection of its own, as another process would. */
function database() {
  const dir = mkdtempSync(join(tmpdir(), 'skein-otel-broker-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return () => {
    const stores = openSqliteStores({ path: join(dir, 'skein.db'), durability: 'normal' });
    cleanups.push(() => stores.close());
    return stores;
  };
}

/** The enqueuing process: a runtime with `outbox: true` whose messages carry `outboxHeaders`. */
function enqueuer(stores: Stores, outboxHeaders?: OutboxHeadersHook) {
  const runtime = createRuntime({
    stores,
    workflows: [ship],
    outbox: true,
    ...(outboxHeaders ? { outboxHeaders } : {}),
    maintenance: false,
    onError: () => undefined,
  });
  cleanups.push(() => runtime.close());
  return runtime;
}

/**
 * The working process: a runtime that reports to its own exporter, and a Supervisor that hears
 * of work through `transport` only (its poll is far off) and adopts the messages' trace context.
 */
async function worker(stores: Stores, transport: Transport) {
  const spans = tracing(cleanups);
  const callers = new CallerContexts();
  const runtime = createRuntime({
    stores,
    workflows: [ship],
    lease: { ttlMs: 60_000 },
    observers: [otelObserver({ tracer: spans.tracer, callers })],
    onError: () => undefined,
  });
  cleanups.push(() => runtime.close());
  const supervisor = new Supervisor({
    runtime,
    stores,
    transport,
    tickIntervalMs: 30_000,
    onTraceparent: callers.adopt,
    onError: () => undefined,
  });
  supervisor.start();
  cleanups.push(() => supervisor.stop());
  await supervisor.listening();
  await supervisor.tick(); // from here on, only the transport brings news of new work
  return { runtime, exporter: spans.exporter, callers };
}

async function completed(runtime: { loadState(id: string): Promise<{ status: string } | null> }, id: string) {
  const deadline = Date.now() + 20_000;
  while ((await runtime.loadState(id))?.status !== 'completed') {
    if (Date.now() > deadline)
      throw new Error(`${id} did not complete: ${(await runtime.loadState(id))?.status}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const steps = (spans: ReadableSpan[]) => spans.filter((span) => span.name === 'skein.step');

/** The caller's span, and a hook that writes its trace context (with a tracestate) on every message. */
function callerSpan() {
  const caller = tracing(cleanups);
  const request = caller.tracer.startSpan('http.request');
  const headers = { traceparent: traceparentOfSpan(request.spanContext()), tracestate: 'shop=checkout' };
  return { request, headers, hook: () => headers };
}

/** Enqueue, wait for the run, and check its steps continue the caller's trace. */
async function expectOneTrace(
  id: string,
  stores: Stores,
  enqueue: ReturnType<typeof enqueuer>,
  work: Awaited<ReturnType<typeof worker>>,
  request: ReturnType<typeof callerSpan>['request'],
) {
  await enqueue.enqueue(ship, { sku: id }, { executionId: id });
  await completed(work.runtime, id);
  request.end();
  const spans = steps(work.exporter.getFinishedSpans());
  expect(spans.map((s) => s.attributes['skein.step.name'])).toEqual(['pack', 'label']);
  const { traceId, spanId } = request.spanContext();
  for (const span of spans) {
    expect(span.spanContext().traceId).toBe(traceId);
    expect(span.parentSpanContext?.spanId).toBe(spanId);
    expect(span.spanContext().traceState?.get('shop')).toBe('checkout');
    // Span ids stay derived from the execution id.
    expect(span.spanContext().spanId).toBe(
      stepSpanIdOf(id, Number(span.attributes['skein.step.position']), 1),
    );
  }
  // The caller context was the run's only; the message held it, written with seq 0.
  expect(work.callers.contextOf(id)).toBeUndefined();
  const [message] = await stores.outbox!.list();
  expect(message).toMatchObject({ topic: EXECUTION_PENDING_TOPIC, key: id, status: 'published' });
}

describe('trace context over the outbox', () => {
  whenAmqp(() => {
    it("enqueue → outbox → RabbitMQ → Supervisor: the run's steps are children of the enqueuer's span, in its trace", async () => {
      const connect = database();
      const enqueuing = connect();
      const prefix = freshPrefix();
      const transport = await connectTransport(prefix, { topics: [EXECUTION_PENDING_TOPIC] });
      cleanups.push(() => deleteTopology(prefix, [EXECUTION_PENDING_TOPIC]));
      cleanups.push(() => transport.close());
      const publisher = new OutboxPublisher({ stores: enqueuing, transport, pollIntervalMs: 20 });
      publisher.start();
      cleanups.push(() => publisher.stop());
      const working = connect();
      const work = await worker(working, transport);
      const caller = callerSpan();
      await expectOneTrace('ship-amqp', enqueuing, enqueuer(enqueuing, caller.hook), work, caller.request);
    });
  });

  it("enqueue → outbox → StoreTransport → Supervisor: the run's steps are children of the enqueuer's span", async () => {
    const connect = database();
    const enqueuing = connect();
    const working = connect();
    const transport = new StoreTransport({ stores: working, pollIntervalMs: 20, retention: false });
    cleanups.push(() => transport.close());
    const work = await worker(working, transport);
    const caller = callerSpan();
    await expectOneTrace('ship-store', enqueuing, enqueuer(enqueuing, caller.hook), work, caller.request);
  });

  it("without outboxHeaders the run stays in its execution's trace; callerTraceHeaders without a span sends the execution's own", async () => {
    expect(callerTraceHeaders('ship-own')).toEqual({ traceparent: traceparentOf('ship-own') });
    const connect = database();
    const enqueuing = connect();
    const working = connect();
    const transport = new StoreTransport({ stores: working, pollIntervalMs: 20, retention: false });
    cleanups.push(() => transport.close());
    const work = await worker(working, transport);
    await enqueuer(enqueuing).enqueue(ship, { sku: 'x' }, { executionId: 'ship-bare' });
    await completed(work.runtime, 'ship-bare');
    const [message] = await enqueuing.outbox!.list();
    expect(message).not.toHaveProperty('headers');
    const spans = steps(work.exporter.getFinishedSpans());
    expect(spans).toHaveLength(2);
    for (const span of spans) {
      expect(span.spanContext().traceId).toBe(traceIdOf('ship-bare'));
      expect(span.parentSpanContext?.spanId).toBe(executionSpanIdOf('ship-bare'));
    }
  });
});
