/**
 * Handles on one execution, typed by its workflow: `result()` gives its output type, `state()`
 * an `ExecutionState<Out>`, `signal(name, payload)` and `update(name, payload)` take only
 * the names and payload types the workflow declares (adr/0048, adr/0078). The runtime still
 * checks every call, for untyped callers.
 */
import type { CancelResult } from './cancellation.js';
import type { ExecutionState } from './fold.js';
import { assertExecutionId } from './ids.js';
import type { ResultOptions } from './result-wait.js';
import type { SignalOptions, SignalResult } from './signal-send.js';
import type { UpdateOptions } from './update-send.js';
import type {
  AnyWorkflow,
  SignalInput,
  SignalName,
  UpdateInput,
  UpdateName,
  WorkflowMessages,
} from './workflow.js';

/** A handle on one execution; `Out` and `M` come from its workflow when the handle is typed. */
export interface WorkflowHandle<Out = unknown, M extends WorkflowMessages = WorkflowMessages> {
  readonly executionId: string;
  /**
   * Resolves with the output at `completed`; rejects with `ExecutionFailedError` at another
   * terminal state, and with `ResultTimeoutError` when `timeoutMs` passes first (the execution
   * goes on untouched).
   */
  result(options?: ResultOptions): Promise<Out>;
  /** The current folded state; null while the execution does not exist. */
  state(): Promise<ExecutionState<Out> | null>;
  /**
   * Send signal `name` to this execution: `runtime.signal(executionId, name, payload, options)`,
   * with the name and payload checked against the workflow's declared signals at compile time.
   */
  signal<K extends SignalName<M>>(
    name: K,
    payload: SignalInput<M, K>,
    options?: SignalOptions,
  ): Promise<SignalResult>;
  /**
   * Send update `name` to this execution and resolve with its handler's result:
   * `runtime.update(executionId, name, payload, options)`, with the name and payload checked
   * against the workflow's declared updates at compile time. `R` is the handler's result type
   * (the definition declares none): `handle.update<number>('add', 'apple')`.
   */
  update<R = unknown, K extends UpdateName<M> = UpdateName<M>>(
    name: K,
    payload: UpdateInput<M, K>,
    options?: UpdateOptions,
  ): Promise<R>;
  /**
   * Cancel this execution with `reason`: `runtime.cancel(executionId, reason)` (a cancel of any
   * id of a continue-as-new chain reaches its current run). A finished execution is left alone.
   */
  cancel(reason: string): Promise<CancelResult>;
}

/** What a handle calls: a runtime or a client. */
export interface HandleSource {
  result<Out>(executionId: string, options?: ResultOptions): Promise<Out>;
  loadState(executionId: string): Promise<ExecutionState | null>;
  signal(executionId: string, name: string, payload: unknown, options?: SignalOptions): Promise<SignalResult>;
  update<R>(executionId: string, name: string, payload: unknown, options?: UpdateOptions): Promise<R>;
  cancel(executionId: string, reason: string): Promise<CancelResult>;
}

/** A handle on `executionId` over `source` (the id is checked here; it need not exist yet). */
export function handleOn<Out, M extends WorkflowMessages>(
  source: HandleSource,
  executionId: unknown,
  where: string,
): WorkflowHandle<Out, M> {
  assertExecutionId(executionId, where);
  return {
    executionId,
    result: (options) => source.result<Out>(executionId, options),
    // The output was recorded by this workflow's body (and its output schema, if any).
    state: () => source.loadState(executionId) as Promise<ExecutionState<Out> | null>,
    signal: (name, payload, options) => source.signal(executionId, name, payload, options),
    update: <R>(name: string, payload: unknown, options?: UpdateOptions) =>
      source.update<R>(executionId, name, payload, options),
    cancel: (reason) => source.cancel(executionId, reason),
  };
}

/**
 * An input whose static type is `unknown` (or `any`): untrusted data such as parsed JSON, which
 * `start` and `enqueue` validate with the workflow's schema before anything is written. An
 * input of a known type matches `never` here, so it must be the workflow's input type.
 */
export type UntrustedInput<I> = unknown extends I ? I : never;

/** True for a workflow definition (what `defineWorkflow` returns), told apart from an id. */
export function isWorkflowDefinition(value: unknown): value is AnyWorkflow {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { name?: unknown }).name === 'string' &&
    typeof (value as { run?: unknown }).run === 'function'
  );
}
