/**
 * `otelObserver` with the in-memory exporter of @opentelemetry/sdk-trace-base and a real
 * SQLite file: spans nest (steps and signals under their execution, in its trace), replayed
 * steps emit nothing, and a crashed-and-recovered execution gives one coherent trace.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import {
  executionSpanIdOf,
  otelObserver,
  SkeinAttributes,
  stepSpanIdOf,
  traceIdOf,
  traceparentOf,
} from '@skein/opentelemetry';
import { openSqliteStores, type SqliteStores } from '@skein/store-sqlite';
import { createRuntime, defineWorkflow, type Runtime } from '@skein/workflow-runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { tracing } from './support/tracing.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function sqlite(): { path: string; open(): SqliteStores } {
  const dir = mkdtempSync(join(tmpdir(), 'skein-otel-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'skein.db');
  return {
    path,
    open() {
      const stores = openSqliteStores({ path });
      cleanups.push(() => stores.close());
      return stores;
    },
  };
}

function runtimeWith(
  stores: SqliteStores,
  workflows: Parameters<typeof createRuntime>[0]['workflows'],
  tracer: ReturnType<typeof tracing>['tracer'],
): Runtime {
  const runtime = createRuntime({
    stores,
    workflows,
    observers: [otelObserver({ tracer })],
    onError: () => undefined,
  });
  cleanups.push(() => runtime.close());
  return runtime;
}

const order = defineWorkflow({
  name: 'order',
  input: z.object({ sku: z.string() }),
  signals: { approve: z.boolean() },
  async run(ctx, input) {
    const hold = await ctx.step(
      'reserve',
      (info) => {
        if (info.attempt === 1) throw new Error('warehouse busy');
        return `hold-${input.sku}`;
      },
      { retry: { maxAttempts: 2, initialMs: 1, maxMs: 1 } },
    );
    const ok = await ctx.waitForSignal('approve');
    return ok ? ctx.step('charge', () => `charged ${hold}`) : 'rejected';
  },
});

async function until(check: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('otelObserver', () => {
  it('nests steps and signals under the execution span, in the trace derived from the execution id, with the attributes', async () => {
    const { exporter, tracer } = tracing(cleanups);
    const runtime = runtimeWith(sqlite().open(), [order], tracer);
    const handle = await runtime.start(order, { sku: 'a' }, { executionId: 'order-42' });
    await until(async () => (await runtime.loadState('order-42'))?.awaiting !== undefined);
    await runtime.signal('order-42', 'approve', true);
    await handle.result();
    const spans = exporter.getFinishedSpans();
    const execution = spans.find((s) => s.name === 'skein.execution')!;
    expect(execution.spanContext()).toMatchObject({
      traceId: traceIdOf('order-42'),
      spanId: executionSpanIdOf('order-42'),
    });
    expect(execution.attributes).toMatchObject({
      [SkeinAttributes.workflowId]: 'order-42',
      [SkeinAttributes.workflowName]: 'order',
      [SkeinAttributes.workflowVersion]: 1,
      [SkeinAttributes.status]: 'completed',
    });
    const steps = spans.filter((s) => s.name === 'skein.step');
    expect(
      steps.map((s) => [
        s.attributes[SkeinAttributes.stepName],
        s.attributes[SkeinAttributes.stepAttempt],
        s.attributes[SkeinAttributes.stepOutcome],
      ]),
    ).toEqual([
      ['reserve', 1, 'retrying'],
      ['reserve', 2, 'completed'],
      ['charge', 1, 'completed'],
    ]);
    for (const span of [...steps, ...spans.filter((s) => s.name === 'skein.signal')]) {
      expect(span.spanContext().traceId).toBe(traceIdOf('order-42'));
      expect(span.parentSpanContext?.spanId).toBe(execution.spanContext().spanId);
      expect(typeof span.attributes[SkeinAttributes.fence]).toBe('number');
    }
    expect(steps[0]!.spanContext().spanId).toBe(stepSpanIdOf('order-42', 0, 1));
    expect(steps[0]!.status).toMatchObject({ code: 2, message: 'warehouse busy' });
    expect(
      spans.filter((s) => s.name === 'skein.signal').map((s) => s.attributes[SkeinAttributes.signalName]),
    ).toEqual(['approve']);
    expect(traceparentOf('order-42')).toBe(`00-${traceIdOf('order-42')}-${executionSpanIdOf('order-42')}-01`);
  });

  it('a crashed-and-recovered execution gives one coherent trace; replayed steps emit nothing', async () => {
    const db = sqlite();
    let hang = true;
    const pipeline = defineWorkflow({
      name: 'pipeline',
      input: z.object({}),
      async run(ctx) {
        await ctx.step('extract', () => 1);
        await ctx.step('transform', async () => {
          if (hang) await new Promise(() => {}); // the first process dies here
          return 2;
        });
        return ctx.step('load', () => 3);
      },
    });
    const first = tracing(cleanups);
    const crashed = createRuntime({
      stores: db.open(),
      workflows: [pipeline],
      observers: [otelObserver({ tracer: first.tracer })],
    });
    await crashed.start(pipeline, {}, { executionId: 'etl-1' });
    await until(async () => (await crashed.loadState('etl-1'))?.calls[1]?.status === 'started');
    hang = false;
    const second = tracing(cleanups);
    const recovering = runtimeWith(db.open(), [pipeline], second.tracer);
    await recovering.execute({ executionId: 'etl-1', workflow: 'pipeline' });
    const before = first.exporter.getFinishedSpans();
    const after = second.exporter.getFinishedSpans();
    // The first process finished "extract" only; the recovery re-ran "transform" and ran "load".
    expect(before.map((s) => s.attributes[SkeinAttributes.stepName])).toEqual(['extract']);
    expect(
      after.filter((s) => s.name === 'skein.step').map((s) => s.attributes[SkeinAttributes.stepName]),
    ).toEqual(['transform', 'load']);
    const all = [...before, ...after];
    expect(new Set(all.map((s) => s.spanContext().traceId))).toEqual(new Set([traceIdOf('etl-1')]));
    expect(new Set(all.map((s) => s.spanContext().spanId)).size).toBe(all.length);
    const execution = all.filter((s) => s.name === 'skein.execution');
    expect(execution).toHaveLength(1);
    for (const step of all.filter((s) => s.name === 'skein.step'))
      expect(step.parentSpanContext?.spanId).toBe(execution[0]!.spanContext().spanId);
    // The re-run attempt keeps the interrupted attempt's span id: a late export of it could not double it.
    expect(
      after.find((s) => s.attributes[SkeinAttributes.stepName] === 'transform')!.spanContext().spanId,
    ).toBe(stepSpanIdOf('etl-1', 1, 1));
  });

  it('a child execution links to its parent execution span', async () => {
    const { exporter, tracer } = tracing(cleanups);
    const leaf = defineWorkflow({
      name: 'leaf',
      input: z.object({}),
      run: async (ctx) => ctx.step('x', () => 1),
    });
    const parent = defineWorkflow({
      name: 'parent',
      input: z.object({}),
      run: async (ctx) => ctx.child(leaf, {}, { executionId: 'leaf-1' }),
    });
    const runtime = runtimeWith(sqlite().open(), [leaf, parent], tracer);
    await (await runtime.start(parent, {}, { executionId: 'parent-1' })).result();
    const child = exporter
      .getFinishedSpans()
      .find((s) => s.name === 'skein.execution' && s.attributes[SkeinAttributes.workflowId] === 'leaf-1')!;
    expect(child.links.map((l) => l.context.spanId)).toEqual([executionSpanIdOf('parent-1')]);
  });

  it('a resumed execution settles in a span of its own, linked to the run it resumed; every span id stays unique', async () => {
    const { exporter, tracer } = tracing(cleanups);
    let cardUp = false;
    const pay = defineWorkflow({
      name: 'pay',
      input: z.object({}),
      async run(ctx) {
        await ctx.step('quote', () => 10);
        return ctx.step('charge', () => {
          if (!cardUp) throw new Error('card service down');
          return 'paid';
        });
      },
    });
    const runtime = runtimeWith(sqlite().open(), [pay], tracer);
    const handle = await runtime.start(pay, {}, { executionId: 'pay-1' });
    await expect(handle.result()).rejects.toThrow();
    cardUp = true;
    await runtime.resume('pay-1', { reason: 'card service fixed' });
    await expect(runtime.handle('pay-1').result()).resolves.toBe('paid');
    await until(() => exporter.getFinishedSpans().filter((s) => s.name === 'skein.execution').length === 2);
    const spans = exporter.getFinishedSpans();
    const [failed, resumed] = spans.filter((s) => s.name === 'skein.execution');
    expect(failed!.spanContext().spanId).toBe(executionSpanIdOf('pay-1'));
    expect(failed!.attributes[SkeinAttributes.status]).toBe('failed');
    expect(failed!.attributes[SkeinAttributes.redrives]).toBeUndefined();
    expect(resumed!.spanContext()).toMatchObject({
      traceId: traceIdOf('pay-1'),
      spanId: executionSpanIdOf('pay-1', 1),
    });
    expect(resumed!.attributes).toMatchObject({
      [SkeinAttributes.status]: 'completed',
      [SkeinAttributes.redrives]: 1,
    });
    expect(resumed!.links.map((l) => l.context.spanId)).toEqual([executionSpanIdOf('pay-1')]);
    // The resumed run's span starts at the resume, after the failed run's span ended.
    const ms = (t: [number, number]) => t[0] * 1000 + t[1] / 1e6;
    expect(ms(resumed!.startTime)).toBeGreaterThanOrEqual(ms(failed!.endTime));
    expect(new Set(spans.map((s) => s.spanContext().spanId)).size).toBe(spans.length);
    expect(
      spans
        .filter((s) => s.name === 'skein.step')
        .map((s) => [s.attributes[SkeinAttributes.stepName], s.attributes[SkeinAttributes.stepOutcome]]),
    ).toEqual([
      ['quote', 'completed'],
      ['charge', 'failed'],
      ['charge', 'completed'],
    ]);
  });

  it('a provider without skeinIdGenerator still gets spans, and is told once', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    cleanups.push(() => provider.shutdown());
    const told: string[] = [];
    const stores = sqlite().open();
    const runtime = createRuntime({
      stores,
      workflows: [order],
      observers: [otelObserver({ tracer: provider.getTracer('t'), onMisconfigured: (m) => told.push(m) })],
    });
    cleanups.push(() => runtime.close());
    await runtime.start(order, { sku: 'b' }, { executionId: 'o-2' });
    await until(() => exporter.getFinishedSpans().length >= 1);
    expect(told).toHaveLength(1);
    expect(told[0]).toContain('skeinIdGenerator');
  });
});
