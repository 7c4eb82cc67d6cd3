/**
 * The runtime's side of signals, children and cancellation, kept out of `runtime.ts`: what
 * they need from the runtime (`FeatureDeps`), the `RunFeatures` a run gets, the work after a
 * run ends or suspends, and resuming a suspended execution that something woke.
 */

import { decode } from './codec.js';
import { ExecutionAlreadyExistsError, ExecutionNotFoundError, UnknownWorkflowError } from './errors.js';
import { type EventType, isTerminalStatus, type StartedPayload } from './events.js';
import type { ExecutionRun, RunOutcome } from './execution-run.js';
import type { ExecutionState } from './fold.js';
import { lostResumeRace, resumeFence } from './resume-fence.js';
import type { RunFeatures } from './run-features.js';
import { hasUnconsumed } from './signal-wait.js';
import type { Stores } from './spi.js';
import type { AnyWorkflow, WorkflowRegistry } from './workflow.js';

/** An event a takeover records before the replay starts. */
export interface TakeoverEvent {
  type: EventType;
  payload: unknown;
}

/** What signals, children and cancellation need from the runtime. */
export interface FeatureDeps {
  stores: Stores;
  registry: WorkflowRegistry;
  clock(): number;
  maxPayloadBytes: number;
  childRecheckMs: number;
  /** The inbox bound each `runtime.signal` passes to `SignalStore.send`. */
  maxPendingSignals: number;
  onError(error: unknown, context: string): void;
  loadState(executionId: string): Promise<ExecutionState | null>;
  /** Resume attempts in progress in this runtime, by execution: they run one at a time. */
  resumes: Map<string, Promise<boolean>>;
  /** True while a run's body is in progress here (it reads the inbox and children itself). */
  bodyRunning(executionId: string): boolean;
  /** True once `close()` was called: a closed runtime starts no new run (`close` could not wait for it). */
  closed(): boolean;
  /** Record `events` under `fence` after `current`, then replay and run it in the background. */
  takeOver(
    current: ExecutionState,
    fence: number,
    events: readonly TakeoverEvent[],
  ): { outcome: Promise<RunOutcome>; firstAppend: Promise<void> };
  /** Write seq 0 of a child and run it here; 'exists' when another start won seq 0. */
  startChild(definition: AnyWorkflow, childId: string, input: unknown, parentId: string): Promise<unknown>;
  cancel(executionId: string, reason: string): Promise<unknown>;
  /**
   * A client's way to hand a suspended execution that waits for a signal now in its inbox to the
   * nodes that run work, instead of resuming it here (undefined in a runtime that executes).
   * True when it recorded the hand-over.
   */
  handOffSignal?: (state: ExecutionState, name: string) => Promise<boolean>;
}

/** The `RunFeatures` every run of a runtime shares. */
export function runFeatures(deps: FeatureDeps): RunFeatures {
  return {
    signals: deps.stores.signals,
    childRecheckMs: deps.childRecheckMs,
    async startChild(workflow, childId, input, parentId) {
      const definition = deps.registry.get(workflow.name, workflow.version);
      const existing = await deps.stores.events.getExecution(childId);
      if (existing === null && (await deps.startChild(definition, childId, input, parentId)) !== 'exists')
        return;
      const now = existing ?? (await deps.stores.events.getExecution(childId));
      if (now !== null && now.workflow !== definition.name)
        throw new ExecutionAlreadyExistsError(childId, now.workflow);
      // A child id is scoped to its parent: only this parent's own earlier start may be reused.
      const owner = await parentOf(deps.stores.events, childId);
      if (owner !== parentId) {
        const reason =
          owner === undefined
            ? `it is not a child of "${parentId}"`
            : `it is a child of "${owner}", not of "${parentId}"`;
        throw new ExecutionAlreadyExistsError(childId, now?.workflow, { reason });
      }
    },
    async settledChild(childId) {
      const summary = await deps.stores.events.getExecution(childId);
      if (summary === null) throw new ExecutionNotFoundError(childId);
      return isTerminalStatus(summary.status) ? deps.loadState(childId) : null;
    },
    async cancelChild(childId, reason) {
      if ((await deps.stores.events.getExecution(childId)) === null) return;
      await deps.cancel(childId, reason);
    },
  };
}

/** The `parentId` recorded in seq 0 of `executionId`, or undefined (no parent, or no seq 0). */
async function parentOf(events: Stores['events'], executionId: string): Promise<string | undefined> {
  const [first] = await events.read(executionId, 0, 1);
  if (first?.type !== 'EXECUTION_STARTED') return undefined;
  return (decode(first.payload) as StartedPayload).parentId;
}

/** True when {@link afterFeatureRun} has anything to do (checked synchronously, off the hot path). */
export function hasFeatureWork(definition: AnyWorkflow, run: ExecutionRun, outcome: RunOutcome): boolean {
  if (run.consumedSignals.length > 0) return true;
  if (outcome.kind === 'suspended') return outcome.awaiting !== undefined;
  if (outcome.state.parentId !== undefined) return true;
  for (const _ in definition.signals) return true;
  return false;
}

/**
 * After a run: mark the signals it consumed completed; at a terminal state empty the inbox
 * (workflows that declare signals) and wake a waiting parent;
 * after a suspension that waits for signals or children, check once more whether one
 * arrived while it suspended (a sender that read the status just before) and resume.
 */
export async function afterFeatureRun(
  deps: FeatureDeps,
  definition: AnyWorkflow,
  run: ExecutionRun,
  outcome: RunOutcome,
): Promise<void> {
  const { signals } = deps.stores;
  const { state } = outcome;
  if (run.consumedSignals.length > 0)
    await Promise.all(run.consumedSignals.map((signalId) => signals.complete(state.executionId, signalId)));
  if (outcome.kind === 'suspended') {
    if (outcome.awaiting !== undefined)
      await resumeIfArrived(
        deps,
        state.executionId,
        'a signal or child it waits for arrived while it suspended',
      );
    return;
  }
  if (definition.signals !== undefined && Object.keys(definition.signals).length > 0)
    await signals.clear(state.executionId);
  const parentId = state.parentId;
  if (parentId !== undefined) {
    await resumeIfWaiting(
      deps,
      parentId,
      (parent) => parent.awaiting?.children.includes(state.executionId) === true,
      `child "${state.executionId}" ended ${state.status}`,
    );
  }
}

/**
 * Resume `executionId` when it is suspended waiting for a signal now in its inbox (and not yet
 * consumed) or for a child that has ended. Resolves true when this call resumed it.
 */
export function resumeIfArrived(deps: FeatureDeps, executionId: string, reason: string): Promise<boolean> {
  return resumeIfWaiting(
    deps,
    executionId,
    async (state) => {
      const awaiting = state.awaiting;
      if (awaiting === undefined) return false;
      if (
        awaiting.signals.length > 0 &&
        (await hasUnconsumed(deps.stores.signals, executionId, awaiting.signals, state.consumedSignals))
      )
        return true;
      const children = await Promise.all(awaiting.children.map((id) => deps.stores.events.getExecution(id)));
      return children.some((child) => child !== null && isTerminalStatus(child.status));
    },
    reason,
  );
}

/**
 * Resume `executionId` when it is suspended and `ready` says what it waits for is there.
 * Attempts in this runtime run one at a time per execution, so a sender and the run's own
 * re-check never both resume it (the second finds it running; the resumed run reads the inbox
 * and children itself), and none resumes while a body of it runs here. After taking a fence it checks the log did not move, so a node that
 * resumed it first is left alone. Resolves true when it resumed the execution (the run goes
 * on in the background).
 */
export function resumeIfWaiting(
  deps: FeatureDeps,
  executionId: string,
  ready: (state: ExecutionState) => boolean | Promise<boolean>,
  reason: string,
  options: { orEarlier?: boolean } = {},
): Promise<boolean> {
  const previous = deps.resumes.get(executionId) ?? Promise.resolve(false);
  // With `orEarlier`, an attempt already under way that resumed it counts: the run it started
  // reads the inbox at its wait, so it receives what this caller stored before asking.
  const attempt = previous
    .catch(() => false)
    .then(
      async (earlier) =>
        (await resumeNow(deps, executionId, ready, reason)) || (options.orEarlier === true && earlier),
    );
  deps.resumes.set(executionId, attempt);
  const forget = () => {
    if (deps.resumes.get(executionId) === attempt) deps.resumes.delete(executionId);
  };
  attempt.then(forget, forget);
  return attempt;
}

async function resumeNow(
  deps: FeatureDeps,
  executionId: string,
  ready: (state: ExecutionState) => boolean | Promise<boolean>,
  reason: string,
): Promise<boolean> {
  // A body in progress here reads the inbox at its wait, or re-checks once it has suspended.
  if (deps.bodyRunning(executionId) || deps.closed()) return false;
  const current = await deps.loadState(executionId);
  if (current === null || current.status !== 'suspended' || !(await ready(current))) return false;
  if (!deps.registry.has(current.workflow, current.version)) {
    // Left suspended for a node that runs this version; reported so it is not lost from view.
    const missing = new UnknownWorkflowError(
      current.workflow,
      current.version,
      deps.registry.names(),
      executionId,
    );
    deps.onError(missing, `wake-up of execution "${executionId}" (${reason})`);
    return false;
  }
  // No new fence: of nodes resuming at once, the sequence picks one (adr/0016).
  const fence = await resumeFence(deps.stores.events, current);
  const resumeSeq = current.sequence + 1; // the run folds into `current` from here on
  const { outcome } = deps.takeOver(current, fence, [
    { type: 'EXECUTION_RESUMED', payload: { reason, fence } },
  ]);
  outcome.catch((error) => {
    if (!lostResumeRace(error, resumeSeq)) deps.onError(error, `resumed run of execution "${executionId}"`);
  });
  return true;
}
