import * as cli from '@skein/cli';
import * as otel from '@skein/opentelemetry';
import { describe, expect, it } from 'vitest';

describe('public entry points', () => {
  it('@skein/cli exports the command line, the inspector, the reads and errors with stable codes and exit codes', () => {
    expect(Object.keys(cli).sort()).toEqual([
      'CliError',
      'CliErrorCodes',
      'ExitCodes',
      'StoreUnavailableError',
      'UsageError',
      'WorkflowModuleError',
      'buildTimeline',
      'createInspector',
      'deadLetters',
      'executionDetail',
      'listPage',
      'openTarget',
      'runCli',
      'startInspector',
    ]);
    expect(cli.ExitCodes).toEqual({ ok: 0, failure: 1, usage: 2 });
    expect(new cli.UsageError('x').toJSON()).toMatchObject({ code: 'CLI_USAGE', name: 'UsageError' });
    expect(new cli.StoreUnavailableError('sqlite:/x', 'no such file').exitCode).toBe(1);
  });

  it('@skein/opentelemetry exports the observer, the id generator and the id derivations', () => {
    expect(Object.keys(otel).sort()).toEqual([
      'CallerContexts',
      'SkeinAttributes',
      'callerTraceHeaders',
      'callerTraceparent',
      'executionSpanIdOf',
      'otelObserver',
      'signalSpanIdOf',
      'skeinIdGenerator',
      'spanContextOf',
      'stepSpanIdOf',
      'traceIdOf',
      'traceparentOf',
      'traceparentOfSpan',
    ]);
    expect(otel.traceIdOf('a')).toMatch(/^[0-9a-f]{32}$/);
    expect(otel.executionSpanIdOf('a')).toMatch(/^[0-9a-f]{16}$/);
    expect(otel.traceIdOf('a')).not.toBe(otel.traceIdOf('b'));
  });
});
