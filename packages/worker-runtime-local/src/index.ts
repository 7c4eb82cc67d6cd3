/**
 * @skein/worker-runtime-local: the in-process worker runtime, the dispatchers and the
 * durable `Supervisor` (timers, lease expiry, recovery, dead-letter).
 */

/** Re-exported from `@skein/workflow-runtime`, where the runtime's in-process maintenance uses it too. */
export { type LeaseExpiredOptions, leaseExpired } from '@skein/workflow-runtime/internal';
export { CircuitBreaker, type CircuitOptions, type CircuitState } from './circuit-breaker.js';
export {
  LeaseMismatchError,
  type LocalErrorCode,
  LocalErrorCodes,
  OutboxMissingError,
  QueueSlotLapsedError,
  SupervisorTickError,
  TransportClosedError,
} from './errors.js';
export { FanOutWorker, type FanOutWorkerOptions, type FanOutWorkerStats } from './fan-out-worker.js';
export { LocalDispatcher, type LocalDispatcherOptions } from './local-dispatcher.js';
export { LocalWorkerRuntime, type LocalWorkerRuntimeOptions } from './local-worker-runtime.js';
export { OutboxPublisher, type OutboxPublisherOptions, type RelayReport } from './outbox-publisher.js';
export type { OutboxRetentionOptions } from './outbox-retention.js';
export { StoreTransport, type StoreTransportOptions, WAKEUP_CHANNEL_OUTBOX } from './store-transport.js';
export { SupervisingDispatcher, type SupervisingDispatcherOptions } from './supervising-dispatcher.js';
export { Supervisor, type SupervisorOptions, type TickReport } from './supervisor.js';
export {
  SIGNAL_GRACE_MS,
  WAKEUP_CHANNEL_PENDING,
  WAKEUP_CHANNEL_SIGNALS,
  WAKEUP_CHANNEL_TIMERS,
  type WakeupSource,
} from './supervisor-wakeups.js';
export type { TraceparentHook } from './trace-context.js';
