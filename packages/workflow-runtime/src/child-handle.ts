/**
 * What `ctx.child` returns (adr/0064): a handle that is also the promise of the child's output,
 * so `await ctx.child(…)` gives the output as it always did, and `signal` / `cancel` talk to the
 * running child. Each handle call is a context call of its own, recorded like a step at the
 * position it takes when it is made (signal-call.ts), and delivered once the child exists.
 */
import type { ChildCall } from './child-call.js';
import type { SentSignal } from './signal-call.js';
import type { SignalInput, SignalName, WorkflowMessages } from './workflow.js';

/**
 * A child execution started with `ctx.child`, typed by the child's definition: awaiting it (or
 * `result()`) gives its output or throws `ChildFailedError`; `signal` takes only the signals the
 * child declares, with their payload types.
 * @example
 * const approval = ctx.child(review, { doc });
 * await approval.signal('reviewer', 'ana');
 * const verdict = await approval; // or approval.result()
 */
export interface ChildHandle<Out, M extends WorkflowMessages = WorkflowMessages> extends Promise<Out> {
  /** Id of the child execution (empty when the call failed before it had one; the handle rejects). */
  readonly executionId: string;
  /** The child's output; rejects with `ChildFailedError` when it ends otherwise. The handle itself. */
  result(): Promise<Out>;
  /**
   * Send signal `name` to the child, once it exists: `ctx.signal(handle.executionId, name, payload)`,
   * recorded like a step and delivered once per recorded call.
   */
  signal<K extends SignalName<M>>(name: K, payload: SignalInput<M, K>): Promise<SentSignal>;
  /**
   * Cancel the child, as `runtime.cancel` does (recorded like a step; a no-op once it ended): its
   * cleanup runs and the handle rejects with `ChildFailedError` (status `cancelled`).
   */
  cancel(reason: string): Promise<void>;
}

/** What a handle's calls do, given by the run. */
export interface ChildHandleCalls {
  signal(childId: string, name: string, payload: unknown, after: Promise<unknown>): Promise<SentSignal>;
  cancel(childId: string, reason: string, after: Promise<unknown>): Promise<void>;
}

/** The handle of `call`, whose output the body receives through `outcome` (in log order). */
export function childHandleOf<Out>(
  call: ChildCall,
  outcome: Promise<Out>,
  calls: ChildHandleCalls,
): ChildHandle<Out> {
  // A handle the body never awaits (it only signals or cancels the child) is not an unhandled rejection.
  outcome.catch(() => undefined);
  const childId = call.childId;
  const missing = () =>
    Promise.reject(
      new Error('ctx.child: the call failed before it had a child id; await the handle for why'),
    );
  return Object.assign(outcome, {
    executionId: childId ?? '',
    result: () => outcome,
    signal: (name: string, payload: unknown) =>
      childId === undefined ? missing() : calls.signal(childId, name, payload, call.started),
    cancel: (reason: string) =>
      childId === undefined ? missing() : calls.cancel(childId, reason, call.started),
  }) as ChildHandle<Out>;
}
