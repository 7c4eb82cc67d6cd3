/** Messages between the host thread and its worker threads; all plain, structured-cloneable data. */

import type { SandboxErrorData } from './codes.js';
import type { SandboxContract } from './contract.js';
import type { SandboxLimits } from './limits.js';
import type { Preparation, PreparedComponent } from './prepare.js';

/** What a worker thread is for: preparing one component, or running invocations. */
export type WorkerRole = 'prepare' | 'sandbox';

/** Host to a preparation worker: prepare these bytes. */
export interface PrepareRequest {
  type: 'prepare';
  bytes: Uint8Array;
  contract: SandboxContract;
}

/** Host to a sandbox worker: keep this component under `key`. */
export interface LoadRequest {
  type: 'load';
  key: string;
  prepared: PreparedComponent;
}

/** Host to a sandbox worker: run one invocation of the component loaded under `key`. */
export interface InvokeRequest {
  type: 'invoke';
  id: number;
  key: string;
  input: string;
  limits: Required<SandboxLimits>;
}

/** What one invocation used and logged, whatever its outcome. */
export interface InvocationUsage {
  logs: string[];
  fuelUsed: number;
  /** Epoch milliseconds at which the worker began and ended the invocation. */
  startedAt: number;
  endedAt: number;
}

/** A worker's answer to an invocation. */
export type InvocationOutcome =
  | ({ ok: true; output: string } & InvocationUsage)
  | ({ ok: false; error: SandboxErrorData } & InvocationUsage);

/** Worker to host. */
export type WorkerMessage =
  | { type: 'ready' }
  | { type: 'prepared'; preparation: Preparation }
  | { type: 'loaded'; key: string }
  | { type: 'outcome'; id: number; outcome: InvocationOutcome }
  | { type: 'failed'; id?: number; message: string };

/** Host to worker. */
export type HostMessage = PrepareRequest | LoadRequest | InvokeRequest;
