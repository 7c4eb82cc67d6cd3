/**
 * What the signal and child context calls need: from the runtime (`RunFeatures`, built once
 * per runtime) and from the run they belong to (`RunInternals`). They live in their own files
 * (`signal-wait.ts`, `child-call.ts`) and reach the run only through these.
 */
import type { ContinuationFeatures } from './continue-as-new.js';
import type { CallKind, DeadlineRecord } from './events.js';
import type { CallRecord, ExecutionState } from './fold.js';
import type { LogWriter } from './log-writer.js';
import type { SignalStore } from './spi.js';
import type { AnyWorkflow } from './workflow.js';

/** What a blocked call waits for besides its timer: a signal name, or a child id. */
export interface Awaiting {
  signal?: string;
  child?: string;
}

/** The runtime's half of signals and children. */
export interface RunFeatures {
  /** The signal inbox. */
  signals: SignalStore;
  /**
   * Start `childId` as a run of `workflow` whose parent is `parentId`, or return when it
   * already exists as that workflow; resolves once its seq 0 is durable.
   */
  startChild(
    workflow: AnyWorkflow,
    childId: string,
    input: unknown,
    parentId: string,
    deadline?: DeadlineRecord,
  ): Promise<void>;
  /** The child's folded state when it is terminal, else null (one index read while it runs). */
  settledChild(childId: string): Promise<ExecutionState | null>;
  /**
   * `ctx.signal`: send signal `name` to `targetId` under `signalId` (as `runtime.signal` does);
   * a resend of a signal the receiver consumed before it ended counts as delivered.
   */
  sendSignal(targetId: string, name: string, payload: unknown, signalId: string): Promise<void>;
  /** Cancel a child (a no-op for one that ended). */
  cancelChild(childId: string, reason: string): Promise<void>;
  /** How often a parent re-checks a child it waits on, in case the child's wake-up was lost. */
  childRecheckMs: number;
  /** `ctx.continueAsNew` and `ctx.historySize` (adr/0063). */
  continuation: ContinuationFeatures;
}

/** The run as a signal or child call sees it. */
export interface RunInternals {
  readonly executionId: string;
  readonly workflow: AnyWorkflow;
  readonly writer: LogWriter;
  readonly host: { clock(): number; features?: RunFeatures };
  /** Signals consumed by this run (deleted from the inbox once the run is durable). */
  readonly consumedSignals: string[];
  /** The state with everything recorded so far. */
  state(): ExecutionState;
  /** True when the log so far consumed `signalId` (its `consumedSignals`, without a scan). */
  isConsumed(signalId: string): boolean;
  /** Take the next position (throws NonDeterminismError, or CancelledError when cancelled). */
  next(kind: CallKind, name: string): { position: number; record: CallRecord | undefined };
  /** The record at the position `next` would take. */
  peek(): CallRecord | undefined;
  /** Wait forever; the run suspends once every branch waits. `wakeAt` needs a durable timer. */
  block(wakeAt: number | undefined, timerId: string | undefined, awaiting?: Awaiting): Promise<never>;
  /** Run `work` as in flight (no suspension meanwhile), then check the run is still usable. */
  track<T>(work: () => Promise<T>): Promise<T>;
  /** Record that a timer fired (`TIMER_FIRED`); its row is deleted after the run. */
  fireTimer(timerId: string | undefined, position: number): void;
  /** Delete a timer's row after the run, recording nothing (the log already dropped it). */
  discardTimer(timerId: string): void;
}

/** The features, or a clear error for a runtime built without them. */
export function featuresOf(run: RunInternals, call: string): RunFeatures {
  const features = run.host.features;
  if (features === undefined) {
    throw new Error(`execution "${run.executionId}": ${call} needs a runtime with signals and children`);
  }
  return features;
}
