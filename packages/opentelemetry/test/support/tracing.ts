/** The tests' tracer providers: derived ids and an in-memory exporter each (one per simulated process). */
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { skeinIdGenerator } from '@skein/opentelemetry';

/** A provider with its exporter and tracer; its shutdown is pushed to `cleanups`. */
export function tracing(cleanups: (() => Promise<void> | void)[]) {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    idGenerator: skeinIdGenerator,
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  cleanups.push(() => provider.shutdown());
  return { exporter, tracer: provider.getTracer('skein-test') };
}
