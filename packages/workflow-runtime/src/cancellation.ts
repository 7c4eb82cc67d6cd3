/**
 * Cancellation (adr/0013). `runtime.cancel` takes the execution over: a new fence, then
 * `CANCEL_REQUESTED` and `EXECUTION_RESUMED`, then a replay with cancellation pending. The
 * workflow sees `CancelledError` at a call below the boundary that had not settled (a step in
 * flight in the fenced-out holder is not run again), or else at its first call at or past the
 * boundary; later calls work normally, so `finally` blocks may run cleanup steps. The run
 * ends `EXECUTION_CANCELLED` whatever the body returns or throws.
 */
import { currentRun } from './continuation-chain.js';
import { ExecutionNotFoundError, UnknownWorkflowError } from './errors.js';
import { type CallKind, type ExecutionStatus, isTerminalStatus } from './events.js';
import type { CallRecord, ExecutionState } from './fold.js';
import type { FeatureDeps } from './signal-child-deps.js';

/** What `runtime.cancel` did. */
export interface CancelResult {
  /** True when the execution is (now, or already) being cancelled; false when it had ended. */
  cancelled: boolean;
  /** Status when the call returned (`running` once a new cancellation is durable). */
  status: ExecutionStatus;
  /** True when an earlier `cancel` had already been recorded; nothing was written. */
  alreadyRequested?: boolean;
}

/** Calls that can be interrupted; `now`, `random`, `uuid` and `patched` never throw it. */
const INTERRUPTIBLE: ReadonlySet<CallKind> = new Set<CallKind>(['step', 'sleep', 'signal', 'child']);

/** Attempts before a cancellation that keeps losing the race for the next seq gives up. */
const ATTEMPTS = 3;

/**
 * True when the call at `position` must throw `CancelledError`. Deterministic from the log:
 * replay delivers it at the same positions as the first cancellation run did.
 */
export function cancellationAt(
  cancel: { boundary: number },
  kind: CallKind,
  position: number,
  record: CallRecord | undefined,
  delivered: boolean,
): boolean {
  if (!INTERRUPTIBLE.has(kind)) return false;
  if (position < cancel.boundary) return record === undefined || !isSettled(record);
  return !delivered;
}

function isSettled(record: CallRecord): boolean {
  return record.status === 'completed' || record.status === 'failed' || record.status === 'fired';
}

/** `runtime.cancel`; resolves once `CANCEL_REQUESTED` is durable (or with nothing written). */
export async function cancelExecution(
  deps: FeatureDeps,
  executionId: string,
  reason: string,
  origin: { deadline?: number } = {},
): Promise<CancelResult> {
  for (let attempt = 1; ; attempt++) {
    const named = await deps.loadState(executionId);
    if (named === null) throw new ExecutionNotFoundError(executionId);
    // Any id of a continue-as-new chain reaches its current run (adr/0063), read again after a race.
    const current = await currentRun(deps, named);
    const runId = current.executionId;
    if (isTerminalStatus(current.status)) return { cancelled: false, status: current.status };
    if (current.cancel !== undefined)
      return { cancelled: true, status: current.status, alreadyRequested: true };
    assertRunnable(deps, current);
    const fence = await deps.stores.events.acquireFence(runId);
    const { firstAppend, outcome } = deps.takeOver(current, fence, [
      { type: 'CANCEL_REQUESTED', payload: { reason, fence, ...origin } },
      { type: 'EXECUTION_RESUMED', payload: { reason: 'cancellation requested', fence } },
    ]);
    try {
      await firstAppend;
      // The cancelling run goes on in the background: a store error there is reported (adr/0033).
      outcome.catch((error: unknown) => deps.onError(error, `cancelling run of execution "${runId}"`));
      return { cancelled: true, status: 'running' };
    } catch (error) {
      // The run fails with the same error, which this call reports to its caller.
      outcome.catch(() => undefined);
      // The holder appended between our read and our fence: read again (it is fenced out now).
      if (!isSeqRace(error) || attempt >= ATTEMPTS) throw error;
    }
  }
}

function assertRunnable(deps: FeatureDeps, state: ExecutionState): void {
  if (!deps.registry.has(state.workflow, state.version)) {
    throw new UnknownWorkflowError(state.workflow, state.version, deps.registry.names(), state.executionId);
  }
}

function isSeqRace(error: unknown): boolean {
  const name = error instanceof Error ? error.name : '';
  return name === 'DuplicateSequenceError' || name === 'SequenceGapError';
}
