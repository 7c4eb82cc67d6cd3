/**
 * @skein/worker-runtime-http: executions over HTTP. `createHttpWorker` serves a runtime on
 * `node:http` with signed requests; `RemoteWorkerRuntime` is its client, a `WorkerRuntime`
 * that `LocalDispatcher` and `SupervisingDispatcher` use unchanged. See docs/remote.md.
 */
export {
  type HttpErrorCode,
  HttpErrorCodes,
  RemoteProtocolError,
  RemoteTimeoutError,
  RemoteUnreachableError,
  RemoteWorkerError,
} from './errors.js';
export { EXECUTION_ID_PATTERN } from './execution-id.js';
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
export { Paths, WireCodes, type WireError } from './wire.js';
