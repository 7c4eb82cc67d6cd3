/**
 * @skein/worker-runtime: the SPI between dispatch and execution. Types and tiny helpers
 * only; implementations live in `@skein/worker-runtime-local` and `@skein/worker-runtime-http`.
 */
export {
  backoffCeiling,
  backoffIssues,
  type RetryBackoff,
  retryDelay,
} from './backoff.js';
export {
  CircuitOpenError,
  type DispatchErrorCode,
  DispatchErrorCodes,
  DispatchFailedError,
  DispatchTimeoutError,
  ExecutionSupersededError,
} from './errors.js';
export type {
  ExecutionDispatcher,
  ExecutionPackage,
  ExecutionResult,
  WorkerLease,
  WorkerRuntime,
} from './spi.js';
export { isSupersededRefusal } from './superseded.js';
export {
  type ConsumeOptions,
  DEFAULT_CONSUME_MAX_ATTEMPTS,
  DEFAULT_PREFETCH,
  type Handled,
  type HandlerVerdict,
  handle,
  type MessageHandler,
  messageOf,
  type PublishOutcome,
  type QuarantinedMessage,
  type Subscription,
  type Transport,
  type TransportMessage,
} from './transport.js';
