/**
 * What signals, children and cancellation need from the runtime (`FeatureDeps`), and the
 * `RunFeatures` a run gets from it: starting a child, reading a settled one, cancelling one.
 * After-run work and resuming a woken execution are in `resume-on-arrival.ts`.
 */

import { decode } from './codec.js';
import { currentRun } from './continuation-chain.js';
import { continuationFeatures } from './continuation-features.js';
import { ExecutionAlreadyExistsError, ExecutionFinishedError, ExecutionNotFoundError } from './errors.js';
import {
  type ContinuedFrom,
  type DeadlineRecord,
  type EventType,
  isTerminalStatus,
  type StartedPayload,
} from './events.js';
import type { RunOutcome } from './execution-run.js';
import type { ExecutionState } from './fold.js';
import type { QueuePlace } from './queues/queued-resume.js';
import type { RunFeatures } from './run-internals.js';
import { sendSignal } from './signal-send.js';
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
  /**
   * The state of a body resident here whose log did not move, without folding the log
   * (adr/0068): read only, never folded into (fork it with `forkState` first).
   */
  residentState?(executionId: string): Promise<ExecutionState | undefined>;
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
  /** Write seq 0 of a successor of `ctx.continueAsNew`, pending; 'exists' when it exists (adr/0063). */
  startSuccessor(
    definition: AnyWorkflow,
    successorId: string,
    input: unknown,
    from: ContinuedFrom,
    parentId: string | undefined,
    queue: QueuePlace | undefined,
  ): Promise<'exists' | { outcome: Promise<unknown> }>;
  /**
   * The queue item of a successor of a queue's execution (after its seq 0, which names the
   * queue): queued, so the queue admits it within its limits; nothing when it exists.
   */
  queueSuccessor(
    definition: AnyWorkflow,
    successorId: string,
    input: unknown,
    queue: QueuePlace,
  ): Promise<void>;
  /** Successors whose hand-over is under way here: this runtime's maintenance leaves them alone (adr/0063). */
  handingOver: Set<string>;
  /** Take the execution lease of `executionId` for this runtime's owner; false when another holds it. */
  claimLease(executionId: string): Promise<boolean>;
  releaseLease(executionId: string): Promise<void>;
  /** Write seq 0 of a child and run it here; 'exists' when another start won seq 0. */
  startChild(
    definition: AnyWorkflow,
    childId: string,
    input: unknown,
    parentId: string,
    deadline?: DeadlineRecord,
  ): Promise<unknown>;
  cancel(executionId: string, reason: string): Promise<unknown>;
  /**
   * Before a resume here: true when the execution belongs to a queue (its seq 0 names one) and
   * this runtime does not hold its slot, so it waits in its queue instead (adr/0056,
   * `queues/queued-resume.ts`).
   */
  waitsForSlot(state: ExecutionState): Promise<boolean>;
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
    continuation: continuationFeatures(deps),
    async startChild(workflow, childId, input, parentId, deadline) {
      const definition = deps.registry.get(workflow.name, workflow.version);
      const existing = await deps.stores.events.getExecution(childId);
      if (
        existing === null &&
        (await deps.startChild(definition, childId, input, parentId, deadline)) !== 'exists'
      )
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
      if (!isTerminalStatus(summary.status)) return null;
      // A child that continued as new settles when its chain's current run does (adr/0063).
      const state = await deps.loadState(childId);
      if (state?.status !== 'continued') return state;
      const current = await currentRun(deps, state);
      return isTerminalStatus(current.status) && current.status !== 'continued' ? current : null;
    },
    async sendSignal(targetId, name, payload, signalId) {
      try {
        await sendSignal(deps, targetId, name, payload, { signalId });
      } catch (error) {
        // Delivered by an earlier run of this call (it crashed before recording), then consumed.
        if (!(error instanceof ExecutionFinishedError)) throw error;
        const target = await deps.loadState(targetId);
        if (target?.consumedSignals?.includes(signalId) !== true) throw error;
      }
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
