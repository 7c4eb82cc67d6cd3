import * as spi from '@skein/worker-runtime';
import * as local from '@skein/worker-runtime-local';
import { describe, expect, it } from 'vitest';

describe('public entry points', () => {
  it('@skein/worker-runtime exports the dispatch and transport SPI helpers and errors with stable codes', () => {
    expect(Object.keys(spi).sort()).toEqual([
      'CircuitOpenError',
      'DEFAULT_CONSUME_MAX_ATTEMPTS',
      'DEFAULT_PREFETCH',
      'DispatchErrorCodes',
      'DispatchFailedError',
      'DispatchTimeoutError',
      'ExecutionSupersededError',
      'backoffCeiling',
      'backoffIssues',
      'handle',
      'isSupersededRefusal',
      'messageOf',
      'retryDelay',
    ]);
    expect(new spi.DispatchTimeoutError('x', 10, 2).code).toBe(spi.DispatchErrorCodes.DispatchTimeout);
    expect(new spi.CircuitOpenError('x', 0, 3).toJSON()).toMatchObject({
      code: 'CIRCUIT_OPEN',
      executionId: 'x',
    });
  });

  it('@skein/worker-runtime-local exports the worker runtime, dispatchers, supervisor, transport, outbox publisher, fan-out worker, predicate and wake-up channels', () => {
    expect(Object.keys(local).sort()).toEqual([
      'CircuitBreaker',
      'FanOutWorker',
      'LeaseMismatchError',
      'LocalDispatcher',
      'LocalErrorCodes',
      'LocalWorkerRuntime',
      'OutboxMissingError',
      'OutboxPublisher',
      'QueueSlotLapsedError',
      'SIGNAL_GRACE_MS',
      'StoreTransport',
      'SupervisingDispatcher',
      'Supervisor',
      'SupervisorTickError',
      'TransportClosedError',
      'WAKEUP_CHANNEL_OUTBOX',
      'WAKEUP_CHANNEL_PENDING',
      'WAKEUP_CHANNEL_SIGNALS',
      'WAKEUP_CHANNEL_TIMERS',
      'leaseExpired',
    ]);
    expect(new local.LeaseMismatchError('a', 'b').code).toBe(local.LocalErrorCodes.LeaseMismatch);
    expect(new local.QueueSlotLapsedError('a', 'q').toJSON()).toMatchObject({
      code: local.LocalErrorCodes.QueueSlotLapsed,
      executionId: 'a',
    });
    // The supervisor's channels are the ones the PostgreSQL stores notify.
    expect([local.WAKEUP_CHANNEL_TIMERS, local.WAKEUP_CHANNEL_SIGNALS, local.WAKEUP_CHANNEL_PENDING]).toEqual(
      ['timers', 'signals', 'pending'],
    );
  });
});
