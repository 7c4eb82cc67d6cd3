/**
 * The work after a run that used signals or children (completing consumed signals, emptying
 * the inbox, waking a waiting parent), and resuming a suspended execution once what it waits
 * for (a signal in its inbox, a child that ended) has arrived.
 */

import { handOver } from './continuation-chain.js';
import { UnknownWorkflowError } from './errors.js';
import type { ExecutionRun, RunOutcome } from './execution-run.js';
import type { ExecutionState } from './fold.js';
import { arrived } from './queues/queued-resume.js';
import { forkState } from './resident-bodies.js';
import { lostResumeRace, resumeFence } from './resume-fence.js';
import type { FeatureDeps } from './signal-child-deps.js';
import type { AnyWorkflow } from './workflow.js';

/** True when {@link afterFeatureRun} has anything to do (checked synchronously, off the hot path). */
export function hasFeatureWork(definition: AnyWorkflow, run: ExecutionRun, outcome: RunOutcome): boolean {
  if (run.consumedSignals.length > 0) return true;
  if (outcome.kind === 'suspended') return outcome.awaiting !== undefined;
  if (outcome.state.continuedAs !== undefined) return true;
  if (outcome.state.parentId !== undefined) return true;
  for (const _ in definition.signals) return true;
  for (const _ in definition.updates) return true;
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
  // Its inbox goes on to the successor, which runs next (adr/0063); the parent waits for the chain.
  if (state.continuedAs !== undefined) return handOver(deps, state);
  // Updates wait in the inbox too (adr/0049): their callers see the end and stop waiting.
  if (hasDeclared(definition.signals) || hasDeclared(definition.updates))
    await signals.clear(state.executionId);
  const parentId = state.parentId;
  if (parentId !== undefined) {
    await resumeIfWaiting(
      deps,
      parentId,
      (parent) => parent.awaiting?.children.includes(state.continuedFrom?.root ?? state.executionId) === true,
      `child "${state.executionId}" ended ${state.status}`,
    );
  }
}

function hasDeclared(messages: Readonly<Record<string, unknown>> | undefined): boolean {
  return messages !== undefined && Object.keys(messages).length > 0;
}

/**
 * Resume `executionId` when it is suspended waiting for a signal now in its inbox (and not yet
 * consumed) or for a child that has ended. Resolves true when this call resumed it.
 */
export function resumeIfArrived(deps: FeatureDeps, executionId: string, reason: string): Promise<boolean> {
  return resumeIfWaiting(deps, executionId, (state) => arrived(deps.stores, state), reason);
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
  const resident = await deps.residentState?.(executionId);
  const current = resident ?? (await deps.loadState(executionId));
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
  // An execution of a queue resumes only where its slot is held; otherwise it waits in its
  // queue, which admits it within the limits (adr/0056).
  if (await deps.waitsForSlot(current)) return false;
  // No new fence: of nodes resuming at once, the sequence picks one (adr/0016).
  const fence = await resumeFence(deps.stores.events, current);
  const resumeSeq = current.sequence + 1; // the run folds into `current` from here on
  // A resident body's state is read only: the run folds into a fork of it.
  const { outcome } = deps.takeOver(resident === undefined ? current : forkState(current), fence, [
    { type: 'EXECUTION_RESUMED', payload: { reason, fence } },
  ]);
  outcome.catch((error) => {
    if (!lostResumeRace(error, resumeSeq)) deps.onError(error, `resumed run of execution "${executionId}"`);
  });
  return true;
}
