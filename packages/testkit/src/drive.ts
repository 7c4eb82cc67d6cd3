/**
 * Driving one execution to a terminal state the way a restarted process would: every call is
 * made by a fresh runtime (closed right after, so no in-process wake-up fires behind the
 * driver's back), `execute` while the execution is new, pending or running, and, while it is
 * suspended: the signals it waits for that the test sends, then its unfinished children driven
 * the same way, then `resumeIfArrived`; failing that, `wake` with the virtual clock moved to
 * the due time.
 */
import {
  type AnyWorkflow,
  createRuntime,
  type ExecuteRequest,
  type ExecutionState,
  isTerminalStatus,
  loadState,
  type Runtime,
  type Stores,
  UpdateFailedError,
  UpdateTimeoutError,
} from '@skein/workflow-runtime';
import { updateInboxName } from '@skein/workflow-runtime/internal';
import type { CrashStart } from './crash-options.js';
import type { VirtualClock } from './virtual-clock.js';

/** What a driver needs. */
export interface DriveContext {
  stores: Stores;
  workflow: AnyWorkflow;
  /** Child workflows, registered with every runtime. */
  workflows: readonly AnyWorkflow[];
  /** Signals to send when the execution waits for them, by name. */
  signals: Readonly<Record<string, unknown>>;
  /** Updates to send when the execution waits with a handler for them, by name (id = name). */
  updates: Readonly<Record<string, unknown>>;
  request: ExecuteRequest;
  clock: VirtualClock;
  snapshotEvery: number;
  /** How far to move the clock when a wake finds its due timers claimed by a dead attempt. */
  claimLapseMs: number;
  /** Where the runtimes' background errors (snapshot failures) go. */
  onError: (error: unknown, context: string) => void;
  /** Resume the execution once when it ends failed or dead-lettered (default: false). */
  resume?: boolean;
  /** Start it with these options (`start`, or `signalWithStart` with a signal) rather than `execute`. */
  start?: CrashStart;
}

/** How a drive ended. */
export type DriveResult =
  | { kind: 'terminal'; state: ExecutionState; calls: number }
  | { kind: 'error'; error: unknown; calls: number }
  | { kind: 'stuck'; reason: string; calls: number };

let nodes = 0;

/**
 * Call `execute` or `wake` on fresh runtimes until the execution is terminal, an error, or
 * `maxCalls`. An execution that continued as new is followed to its successor, so the result
 * is the end of its chain.
 */
export async function driveToEnd(start: DriveContext, maxCalls: number): Promise<DriveResult> {
  let calls = 0;
  let context = start;
  const counted = { add: () => calls++ < maxCalls };
  try {
    for (;;) {
      const current = await loadState(context.stores, context.request.executionId);
      if (current?.continuedAs !== undefined) {
        context = { ...context, request: { executionId: current.continuedAs, workflow: current.workflow } };
        continue;
      }
      if (current !== null && isTerminalStatus(current.status)) {
        if (await resumable(context, current)) {
          if (!counted.add()) break;
          await resumeOnce(context, current.executionId);
          continue;
        }
        await driveChildren(context, current, counted);
        return { kind: 'terminal', state: current, calls };
      }
      if (!counted.add()) break;
      await nextCall(context, current, counted);
    }
  } catch (error) {
    return { kind: 'error', error, calls };
  }
  return { kind: 'stuck', reason: `not terminal after ${maxCalls} execute/wake calls`, calls: maxCalls };
}

/** With `resume`: a failed or dead-lettered execution whose log holds no resume yet. */
async function resumable(context: DriveContext, state: ExecutionState): Promise<boolean> {
  if (context.resume !== true || (state.status !== 'failed' && state.status !== 'dead_lettered'))
    return false;
  const log = await context.stores.events.read(state.executionId);
  return !log.some((event) => event.type === 'EXECUTION_REDRIVEN');
}

/** An operator's `runtime.resume` on a fresh runtime, run until it ends or suspends. */
async function resumeOnce(context: DriveContext, executionId: string): Promise<void> {
  const runtime = freshRuntime(context);
  try {
    await runtime.resume(executionId);
  } finally {
    await runtime.close();
  }
}

function freshRuntime(context: DriveContext) {
  nodes += 1;
  return createRuntime({
    stores: context.stores,
    workflows: [context.workflow, ...context.workflows],
    clock: context.clock.clock,
    snapshotEvery: context.snapshotEvery,
    nodeId: `testkit-node-${nodes}`,
    onError: context.onError,
    // Each call here is one node's recovery, counted and crashed at will: no background passes.
    maintenance: false,
  });
}

/** One step of the drive by a fresh runtime (see the module comment). */
async function nextCall(
  context: DriveContext,
  current: ExecutionState | null,
  counted: { add(): boolean },
): Promise<void> {
  if (current?.status === 'suspended' && current.awaiting !== undefined) {
    if (await deliverAwaited(context, current, counted)) return;
  }
  const runtime = freshRuntime(context);
  try {
    if (current === null && context.start !== undefined) {
      await startWith(runtime, context, context.start);
      return;
    }
    if (current === null || current.status !== 'suspended') {
      await runtime.execute(context.request);
      return;
    }
    const due = dueAt(current);
    if (due === undefined) throw new Error(`execution "${current.executionId}" is suspended on no timer`);
    if (due > context.clock.now()) context.clock.set(due);
    const woken = await runtime.wake(current.executionId);
    // Nothing moved: the due timers are claimed by an attempt that died; let the claim lapse.
    if (woken?.sequence === current.sequence) context.clock.advance(context.claimLapseMs);
  } finally {
    await runtime.close();
  }
}

/**
 * The first call of an execution with start options: `signalWithStart` or `start` on the fresh
 * runtime; its close waits for the run the start began here.
 */
async function startWith(runtime: Runtime, context: DriveContext, start: CrashStart): Promise<void> {
  const { executionId, input } = context.request;
  const { signal, ...deadline } = start;
  const options = { executionId, ...deadline };
  if (signal === undefined) await runtime.start(context.workflow, input, options);
  else await runtime.signalWithStart(context.workflow, input, signal, options);
}

/** When a suspended execution is due: its earliest timer, or its deadline when that comes first. */
function dueAt(state: ExecutionState): number | undefined {
  const times = state.timers.map((timer) => timer.dueAt);
  if (state.deadline !== undefined && state.cancel === undefined) times.push(state.deadline.at);
  return times.length === 0 ? undefined : Math.min(...times);
}

/** Drive one child to its end the way the root is driven. */
async function driveChild(
  context: DriveContext,
  childId: string,
  counted: { add(): boolean },
): Promise<void> {
  for (;;) {
    const state = await loadState(context.stores, childId);
    if (state === null || isTerminalStatus(state.status)) return;
    if (!counted.add()) throw new Error(`child "${childId}" did not end within the drive's calls`);
    const request = { executionId: childId, workflow: state.workflow };
    await nextCall({ ...context, request }, state, counted);
  }
}

/**
 * A parent that ended may leave a child it no longer waited for (a race's loser, or one whose
 * start was in flight when the body returned): end every unfinished execution in the stores,
 * as a supervisor would.
 */
async function driveChildren(
  context: DriveContext,
  parent: ExecutionState,
  counted: { add(): boolean },
): Promise<void> {
  const status = ['pending', 'running', 'suspended'] as const;
  for (;;) {
    const { items } = await context.stores.events.listExecutions({ status, limit: 1 });
    const [left] = items.filter((item) => item.executionId !== parent.executionId);
    if (left === undefined) return;
    await driveChild(context, left.executionId, counted);
  }
}

/**
 * Send an update and wait a little for its result: a crash in the run it wakes leaves it in
 * the inbox (the next drive call applies it), so a timeout is no failure of the drive.
 */
async function sendUpdate(
  runtime: Runtime,
  executionId: string,
  name: string,
  payload: unknown,
): Promise<void> {
  try {
    await runtime.update(executionId, name, payload, { updateId: name, timeoutMs: 200 });
  } catch (error) {
    if (!(error instanceof UpdateTimeoutError || error instanceof UpdateFailedError)) throw error;
  }
}

/**
 * Send the awaited signals the test sends and drive the awaited children to their end, then
 * resume the execution if one of them arrived. False when nothing it waits for arrived.
 */
async function deliverAwaited(
  context: DriveContext,
  current: ExecutionState,
  counted: { add(): boolean },
): Promise<boolean> {
  const { signals, children } = current.awaiting!;
  for (const childId of children) await driveChild(context, childId, counted);
  // A child's end may have resumed it already.
  const now = await loadState(context.stores, current.executionId);
  if (now?.sequence !== current.sequence) return true;
  const runtime = freshRuntime(context);
  try {
    // Updates first: a signal may let the body run to its end before they are applied.
    for (const [name, payload] of Object.entries(context.updates)) {
      if (!signals.includes(updateInboxName(name))) continue;
      if (current.updates?.some((update) => update.updateId === name) === true) continue;
      await sendUpdate(runtime, current.executionId, name, payload);
    }
    for (const name of signals) {
      if (!Object.hasOwn(context.signals, name)) continue;
      await runtime.signal(current.executionId, name, context.signals[name], { signalId: name });
    }
    await runtime.resumeIfArrived(current.executionId);
  } finally {
    await runtime.close();
  }
  // Moved: a send or the re-check resumed it (the close waited for the run).
  const after = await loadState(context.stores, current.executionId);
  return after?.sequence !== current.sequence;
}
