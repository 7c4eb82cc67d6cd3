/**
 * The runtime's side of continue-as-new (adr/0063): following a chain from any of its ids to
 * its current run, handing a continued execution's inbox to its successor, and starting the
 * successor's run.
 *
 * Signals are never lost at a continue. The continuing run writes `EXECUTION_CONTINUED` and
 * only then moves what waits in its inbox (skipping what its log consumed) to the successor;
 * a sender that finds an execution `continued` sends to the chain's current run; and a sender
 * that read the status just before and wrote into the old inbox reads the status again after
 * its write and moves the inbox itself. Moving is idempotent (signal ids are per execution and
 * stay taken once sent), so any number of movers deliver each signal once. A crash after the
 * end and before the move leaves the successor pending; whoever claims it moves the inbox
 * first (`adoptInbox`).
 */
import { decode } from './codec.js';
import { ExecutionAlreadyExistsError, StaleFenceError, StorageWriteError } from './errors.js';
import type { ContinuedFrom, StartedPayload } from './events.js';
import type { ExecutionState } from './fold.js';
import { resumeIfArrived } from './resume-on-arrival.js';
import type { FeatureDeps } from './signal-child-deps.js';
import type { EventStore } from './spi.js';

/** Most links followed from one id; a longer chain is followed by the next call from where this stopped. */
const MAX_HOPS = 10_000;

/** Signals moved per page. */
const PAGE = 100;

/** The state of the chain's current run from `state` on: `state` unless it is `continued`. */
export async function currentRun(
  deps: Pick<FeatureDeps, 'loadState'>,
  state: ExecutionState,
): Promise<ExecutionState> {
  let current = state;
  for (let hops = 0; current.status === 'continued' && current.continuedAs !== undefined; hops++) {
    if (hops >= MAX_HOPS) break;
    const next = await deps.loadState(current.continuedAs);
    if (next === null) break; // written only after the successor's seq 0: cannot happen
    current = next;
  }
  return current;
}

/** The `continuedFrom` recorded in seq 0 of `executionId`, or undefined. */
export async function continuedFromOf(
  events: EventStore,
  executionId: string,
): Promise<ContinuedFrom | undefined> {
  const [first] = await events.read(executionId, 0, 1);
  if (first?.type !== 'EXECUTION_STARTED') return undefined;
  return (decode(first.payload) as StartedPayload).continuedFrom;
}

/**
 * Move what waits in the inbox of the continued execution `from` to its successor, and on
 * down the chain while the successor has continued too; then wake the run that got them.
 * Signals the log of `from` consumed are only marked done. Resolves with the id of the run the
 * signals went to.
 */
export async function forwardInbox(deps: FeatureDeps, from: ExecutionState): Promise<string> {
  let source = from;
  for (let hops = 0; source.continuedAs !== undefined && hops < MAX_HOPS; hops++) {
    const target = source.continuedAs;
    const moved = await moveSignals(deps, source, target);
    const next = await deps.loadState(target);
    if (next === null || next.status !== 'continued') {
      if (moved > 0) await resumeIfArrived(deps, target, `signals moved from "${source.executionId}"`);
      return target;
    }
    source = next;
  }
  return source.executionId;
}

async function moveSignals(deps: FeatureDeps, from: ExecutionState, to: string): Promise<number> {
  const { signals } = deps.stores;
  const consumed = new Set(from.consumedSignals ?? []);
  let moved = 0;
  for (;;) {
    const page = await signals.pending(from.executionId, { limit: PAGE });
    if (page.length === 0) return moved;
    for (const signal of page) {
      if (!consumed.has(signal.signalId)) {
        const outcome = await signals.send(
          { ...signal, executionId: to },
          { maxPending: deps.maxPendingSignals },
        );
        if (outcome === 'inbox-full') {
          // Left in the old inbox; the next mover (a sender, a claim of the successor) tries again.
          deps.onError(
            new Error(`inbox of "${to}" is full; signal "${signal.signalId}" waits in "${from.executionId}"`),
            `continue-as-new of execution "${from.executionId}"`,
          );
          return moved;
        }
        moved += 1;
      }
      await signals.complete(from.executionId, signal.signalId);
    }
  }
}

/**
 * After a send into the inbox of `executionId`: when it has continued meanwhile, move its
 * inbox down the chain. Resolves with the id the signal went on to, or undefined.
 */
export async function forwardIfContinued(
  deps: FeatureDeps,
  executionId: string,
): Promise<string | undefined> {
  const summary = await deps.stores.events.getExecution(executionId);
  if (summary?.status !== 'continued') return undefined;
  const state = await deps.loadState(executionId);
  return state === null ? undefined : forwardInbox(deps, state);
}

/**
 * Before the first run of a pending successor: when its predecessor has continued, take what
 * still waits in the predecessor's inbox (a crash between the end and the move left it there).
 */
export async function adoptInbox(deps: FeatureDeps, successor: ExecutionState): Promise<void> {
  const from = successor.continuedFrom;
  if (from === undefined || successor.status !== 'pending') return;
  const predecessor = await deps.loadState(from.executionId);
  if (predecessor?.status === 'continued') await moveSignals(deps, predecessor, successor.executionId);
}

/**
 * The work after a run that ended `continued`: move the inbox, then run the successor here
 * unless it is running or another node claimed it already.
 */
export async function handOver(deps: FeatureDeps, state: ExecutionState): Promise<void> {
  const successorId = state.continuedAs;
  if (successorId === undefined) return;
  try {
    await moveSignals(deps, state, successorId);
    await startSuccessorRun(deps, state, successorId);
  } finally {
    deps.handingOver.delete(successorId);
  }
}

/**
 * Claim the pending successor's lease (the mutex with other nodes' claims of pending work, as
 * a maintenance pass or a Supervisor takes it) and run it here under a new fence.
 */
async function startSuccessorRun(
  deps: FeatureDeps,
  state: ExecutionState,
  successorId: string,
): Promise<void> {
  if (deps.closed() || deps.bodyRunning(successorId)) return;
  if (!(await deps.claimLease(successorId))) return; // another node claimed it: its run is the one
  const successor = await deps.loadState(successorId);
  if (successor?.status !== 'pending') {
    await deps.releaseLease(successorId);
    // Claimed and run already (it may wait for a signal just moved): wake it if so.
    await resumeIfArrived(deps, successorId, `signals moved from "${state.executionId}"`);
    return;
  }
  // A successor in a queue runs where the queue admits it, within its limits.
  if (await deps.waitsForSlot(successor)) {
    await deps.releaseLease(successorId);
    return;
  }
  const fence = await deps.stores.events.acquireFence(successorId);
  const reason = `continued from "${state.executionId}"`;
  const { outcome } = deps.takeOver(successor, fence, [
    { type: 'EXECUTION_RECOVERED', payload: { reason, fence, claimed: true } },
  ]);
  outcome.catch((error: unknown) => {
    // Another node claimed it under a newer fence: its run is the one.
    if (!fencedOut(error)) deps.onError(error, `run of execution "${successorId}" (${reason})`);
  });
}

function fencedOut(error: unknown): boolean {
  if (error instanceof StaleFenceError) return true;
  return error instanceof StorageWriteError && error.cause instanceof StaleFenceError;
}

/**
 * `startSuccessor` of the runtime: seq 0 of `successorId`, pending; an existing one is
 * accepted only when its seq 0 names `from.executionId`.
 */
export async function startSuccessorWith(
  events: EventStore,
  bootstrap: (successorId: string) => Promise<'exists' | { outcome: Promise<unknown> }>,
  successorId: string,
  workflow: string,
  from: ContinuedFrom,
): Promise<void> {
  const begun = await bootstrap(successorId);
  if (begun !== 'exists') {
    await begun.outcome;
    return;
  }
  const recorded = await continuedFromOf(events, successorId);
  if (recorded?.executionId === from.executionId) return;
  throw new ExecutionAlreadyExistsError(successorId, workflow, {
    reason: `it is not the successor of "${from.executionId}", so "${from.executionId}" cannot continue as it`,
  });
}
