/** The public surface of @skein/worker-runtime-http: every export is there and is what it says. */
import {
  createExecutor,
  createHttpWorker,
  EXECUTION_ID_PATTERN,
  ExecutorHub,
  ExecutorPaths,
  ExecutorRunRefusedError,
  ExecutorStateError,
  ExecutorUnavailableError,
  HttpErrorCodes,
  MAX_TRANSACTION_ID_BYTES,
  MIN_SECRET_BYTES,
  NONCE_HEADER,
  Paths,
  RemoteProtocolError,
  RemoteTimeoutError,
  RemoteUnreachableError,
  RemoteWorkerError,
  RemoteWorkerRuntime,
  RetainedRunInspectionError,
  SIGNATURE_HEADER,
  signRequest,
  TIMESTAMP_HEADER,
  TRACEPARENT_HEADER,
  WireCodes,
  wellFormedTraceparent,
} from '@skein/worker-runtime-http';
import { SkeinError } from '@skein/workflow-runtime';
import { describe, expect, it } from 'vitest';

describe('@skein/worker-runtime-http exports', () => {
  it('errors are SkeinErrors with stable codes and cross the wire as plain data', () => {
    const errors = [
      new RemoteWorkerError('e', 500, 'internal', 'internal error', 'id-1'),
      new RemoteTimeoutError('e', 'http://127.0.0.1:1', 10),
      new RemoteUnreachableError('e', 'http://127.0.0.1:1'),
      new RemoteProtocolError('e', 'http://127.0.0.1:1', 'why'),
      new ExecutorStateError('/state', 'package_version', '1.0.0', '2.0.0'),
      new ExecutorUnavailableError('e', 'no executor holds a live session'),
      new ExecutorRunRefusedError('e', 'it has progress in the central log'),
      new RetainedRunInspectionError('exec-a', 'e', 'read-failed', 'disk I/O error'),
    ];
    for (const error of errors) expect(error).toBeInstanceOf(SkeinError);
    expect(errors.map((error) => error.code)).toEqual(Object.values(HttpErrorCodes));
    expect(errors[0]!.toJSON()).toEqual({
      code: 'REMOTE_WORKER_ERROR',
      name: 'RemoteWorkerError',
      message: errors[0]!.message,
      executionId: 'e',
    });
  });

  it('the protocol constants are the documented ones', () => {
    expect(Paths).toEqual({ executions: '/v1/executions', leases: '/v1/leases', health: '/healthz' });
    expect(WireCodes.Superseded).toBe('superseded');
    expect([TIMESTAMP_HEADER, NONCE_HEADER, SIGNATURE_HEADER]).toEqual([
      'x-skein-timestamp',
      'x-skein-nonce',
      'x-skein-signature',
    ]);
    expect(MIN_SECRET_BYTES).toBe(32);
    expect(TRACEPARENT_HEADER).toBe('traceparent');
    const tp = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    expect(wellFormedTraceparent(tp)).toBe(tp);
    for (const bad of [
      '01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      `${tp}-x`,
      'x',
      42,
      undefined,
    ])
      expect(wellFormedTraceparent(bad)).toBeUndefined();
    expect(wellFormedTraceparent('00-00000000000000000000000000000000-b7ad6b7169203331-01')).toBeUndefined();
    expect(EXECUTION_ID_PATTERN.test('order-42:v1.retry_2')).toBe(true);
    expect(EXECUTION_ID_PATTERN.test('..')).toBe(false);
    const headers = signRequest(
      Buffer.alloc(32),
      { method: 'GET', path: '/healthz', body: Buffer.alloc(0) },
      1,
    );
    expect(headers[TIMESTAMP_HEADER]).toBe('1');
    expect(headers[SIGNATURE_HEADER]).toMatch(/^v1=[0-9a-f]{64}$/);
    expect(typeof createHttpWorker).toBe('function');
    expect(typeof RemoteWorkerRuntime).toBe('function');
    expect(typeof ExecutorHub).toBe('function');
    expect(typeof createExecutor).toBe('function');
    expect(ExecutorPaths.results).toBe('/v1/executor/results');
    expect(MAX_TRANSACTION_ID_BYTES).toBe(256);
    expect(WireCodes.NotYourRun).toBe('not_your_run');
  });
});
