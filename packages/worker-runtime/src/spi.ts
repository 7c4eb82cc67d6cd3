/**
 * The SPI between dispatch and execution (docs/architecture.md#dispatch): a dispatcher hands an
 * {@link ExecutionPackage} to a {@link WorkerRuntime}, one attempt at a time, each under its
 * own {@link WorkerLease}. Implementations: `@skein/worker-runtime-local` (in process) and
 * `@skein/worker-runtime-http` (over HTTP).
 */
import type { ExecutionState } from '@skein/workflow-runtime';

/** What to execute: plain data, so it can cross a process boundary. */
export interface ExecutionPackage {
  executionId: string;
  /** Name of the workflow. */
  workflow: string;
  /** Input, used only when the execution does not exist yet. */
  input?: unknown;
  /** Version to start with when the execution does not exist yet (default: the newest registered). */
  version?: number;
  /**
   * Only start, never take over: set by a dispatcher retrying a start that was fenced out
   * (`StartFencedOutError`). If the execution exists by then, another holder started it and
   * the worker refuses with `ExecutionAlreadyExistsError`, a superseded refusal (default: false).
   */
  startOnly?: boolean;
}

/** The state an execution reached: terminal, or suspended until a timer is due. */
export type ExecutionResult = ExecutionState;

/** One attempt's right to write an execution: the fence it appends with. */
export interface WorkerLease {
  executionId: string;
  /** The fence of this attempt; a later attempt's larger fence fences this one out. */
  fence: number;
  /** Which worker granted it (a node id or a URL). */
  workerId: string;
  /** Milliseconds since the epoch. */
  allocatedAt: number;
}

/** Where executions run. Every attempt is `allocate`, `execute`, `release`. */
export interface WorkerRuntime {
  /** Take a new fence for this attempt. */
  allocate(pkg: ExecutionPackage): Promise<WorkerLease>;
  /** Execute (or continue) the execution under the lease's fence; resolves terminal or suspended. */
  execute(lease: WorkerLease, pkg: ExecutionPackage): Promise<ExecutionResult>;
  /** End the attempt (also after a failure or a deadline). */
  release(lease: WorkerLease): Promise<void>;
}

/** Sends executions to workers and returns their outcome. */
export interface ExecutionDispatcher {
  /**
   * Run the execution to a terminal or suspended state. A workflow that ends `failed` is an
   * outcome, returned. Rejects with `ExecutionSupersededError` when another holder owns it.
   */
  dispatch(pkg: ExecutionPackage): Promise<ExecutionResult>;
}
