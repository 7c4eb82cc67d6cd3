/**
 * Driving one execution to a terminal state the way a restarted process would: every call is
 * made by a fresh runtime (closed right after, so no in-process wake-up fires behind the
 * driver's back), `execute` while the execution is new, pending or running, and `wake` with
 * the virtual clock moved to the due time while it is suspended on a timer.
 */
import {
  type AnyWorkflow,
  createRuntime,
  type ExecuteRequest,
  type ExecutionState,
  isTerminalStatus,
  loadState,
  type Stores,
} from '@skein/workflow-runtime';
import type { VirtualClock } from './virtual-clock.js';

/** What a driver needs. */
export interface DriveContext {
  stores: Stores;
  workflow: AnyWorkflow;
  request: ExecuteRequest;
  clock: VirtualClock;
  snapshotEvery: number;
  /** How far to move the clock when a wake finds its due timers claimed by a dead attempt. */
  claimLapseMs: number;
  /** Where the runtimes' background errors (snapshot failures) go. */
  onError: (error: unknown, context: string) => void;
}

/** How a drive ended. */
export type DriveResult =
  | { kind: 'terminal'; state: ExecutionState; calls: number }
  | { kind: 'error'; error: unknown; calls: number }
  | { kind: 'stuck'; reason: string; calls: number };

let nodes = 0;

/** Call `execute` or `wake` on fresh runtimes until the execution is terminal, an error, or `maxCalls`. */
export async function driveToEnd(context: DriveContext, maxCalls: number): Promise<DriveResult> {
  for (let calls = 0; calls < maxCalls; calls++) {
    let current: ExecutionState | null;
    try {
      current = await loadState(context.stores, context.request.executionId);
      if (current !== null && isTerminalStatus(current.status))
        return { kind: 'terminal', state: current, calls };
      await nextCall(context, current);
    } catch (error) {
      return { kind: 'error', error, calls: calls + 1 };
    }
  }
  return { kind: 'stuck', reason: `not terminal after ${maxCalls} execute/wake calls`, calls: maxCalls };
}

/** One call by a fresh runtime: `execute`, or for a suspended execution `wake` at the due time. */
async function nextCall(context: DriveContext, current: ExecutionState | null): Promise<void> {
  nodes += 1;
  const runtime = createRuntime({
    stores: context.stores,
    workflows: [context.workflow],
    clock: context.clock.clock,
    snapshotEvery: context.snapshotEvery,
    nodeId: `testkit-node-${nodes}`,
    onError: context.onError,
    // Each call here is one node's recovery, counted and crashed at will: no background passes.
    maintenance: false,
  });
  try {
    if (current === null || current.status !== 'suspended') {
      await runtime.execute(context.request);
      return;
    }
    if (current.timers.length === 0)
      throw new Error(`execution "${current.executionId}" is suspended on no timer`);
    const due = Math.min(...current.timers.map((timer) => timer.dueAt));
    if (due > context.clock.now()) context.clock.set(due);
    const woken = await runtime.wake(current.executionId);
    // Nothing moved: the due timers are claimed by an attempt that died; let the claim lapse.
    if (woken?.sequence === current.sequence) context.clock.advance(context.claimLapseMs);
  } finally {
    await runtime.close();
  }
}
