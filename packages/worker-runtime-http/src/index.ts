/**
 * @skein/worker-runtime-http: executions over HTTP. `createHttpWorker` serves a runtime on
 * `node:http` with signed requests; `RemoteWorkerRuntime` is its client, a `WorkerRuntime`
 * that `LocalDispatcher` and `SupervisingDispatcher` use unchanged. See docs/remote.md.
 * `ExecutorHub` and `createExecutor` run work on executors that keep their results in their
 * own SQLite file. See docs/executors.md.
 */
export {
  ExecutorRunRefusedError,
  ExecutorStateError,
  ExecutorUnavailableError,
  type HttpErrorCode,
  HttpErrorCodes,
  type InspectionFailure,
  RemoteProtocolError,
  RemoteTimeoutError,
  RemoteUnreachableError,
  RemoteWorkerError,
  RetainedRunInspectionError,
} from './errors.js';
export { EXECUTION_ID_PATTERN } from './execution-id.js';
export {
  createExecutor,
  type Executor,
  type ExecutorOptions,
  type StartupReport,
} from './executor/executor.js';
export {
  ExecutorHub,
  type ExecutorHubOptions,
  type InspectOptions,
  type RetainedRunInspection,
} from './executor/executor-hub.js';
export { ExecutorPaths, type FoundRun, MAX_TRANSACTION_ID_BYTES } from './executor/executor-wire.js';
export type { ExecutorLogger } from './executor/logger.js';
export type { Binding, StateCounts } from './executor/retained-store.js';
export { createHttpWorker, type HttpWorker } from './http-worker.js';
export type { HttpWorkerOptions, WorkerLimits, WorkerLogger } from './options.js';
export { RemoteWorkerRuntime, type RemoteWorkerRuntimeOptions } from './remote-worker-runtime.js';
export {
  MIN_SECRET_BYTES,
  NONCE_HEADER,
  SIGNATURE_HEADER,
  signRequest,
  TIMESTAMP_HEADER,
} from './signing.js';
export { TRACEPARENT_HEADER, wellFormedTraceparent } from './trace-context.js';
export { Paths, WireCodes, type WireError } from './wire.js';
