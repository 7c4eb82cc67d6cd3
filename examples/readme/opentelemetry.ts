// examples/readme/opentelemetry.ts: spans for every execution, step and signal
import { BasicTracerProvider, BatchSpanProcessor, ConsoleSpanExporter } from '@opentelemetry/sdk-trace-base';
import { otelObserver, skeinIdGenerator } from '@skein/opentelemetry';
import { openSqliteStores } from '@skein/store-sqlite';
import { createRuntime, defineWorkflow } from '@skein/workflow-runtime';
import { z } from 'zod';

const order = defineWorkflow({
  name: 'order',
  input: z.object({ sku: z.string() }),
  run: async (ctx, input) => ctx.step('reserve', () => `hold-${input.sku}`),
});

// skeinIdGenerator lets span ids derive from execution ids (one trace per execution, across processes).
const provider = new BasicTracerProvider({
  idGenerator: skeinIdGenerator,
  spanProcessors: [new BatchSpanProcessor(new ConsoleSpanExporter())],
});
const stores = openSqliteStores({ path: './skein.db' });
const runtime = createRuntime({
  stores,
  workflows: [order],
  observers: [otelObserver({ tracer: provider.getTracer('skein') })],
});
await (await runtime.start(order, { sku: 'a' })).result();
await runtime.close();
await stores.close();
await provider.shutdown();
