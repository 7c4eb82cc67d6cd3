/**
 * Deadlines (adr/0065): `start(…, { timeoutMs })` or `{ deadline }` records the instant in seq 0
 * with the id of a timer row of its own, scheduled before seq 0 is written, so the deadline is
 * durable before the execution exists. When the row is due, whatever fires timers (the
 * in-process maintenance, a `Supervisor`, `runtime.wake`) cancels the execution, as
 * `runtime.cancel` does, with a `CANCEL_REQUESTED` that names the deadline: the body sees
 * `DeadlineExceededError` (a `CancelledError`, code `DEADLINE_EXCEEDED`) and its cleanup runs.
 */
import { instantSchema, positiveDurationMsSchema } from './durations.js';
import { CancelledError, DeadlineExceededError, ErrorCodes, InvalidInputError } from './errors.js';
import { type DeadlineRecord, isTerminalStatus } from './events.js';
import type { ExecutionState } from './fold.js';
import { newId } from './ids.js';
import type { TimerStore } from './spi.js';
import { parseWith } from './workflow.js';

/** The deadline options of `start` and `enqueue`. */
export interface DeadlineOptions {
  /**
   * Cancel the execution this many milliseconds (>= 1) after the start, wherever it is then
   * (running a step, sleeping, waiting for a signal), even across restarts (default: none).
   */
  timeoutMs?: number;
  /** Cancel the execution at this instant (a `Date` or ms since the epoch) (default: none). */
  deadline?: Date | number;
}

/**
 * The deadline `options` ask for, checked (an `InvalidInputError` naming `where` and the
 * field, before anything is written), with a new timer id; undefined when they ask for none.
 */
export function deadlineOf(options: DeadlineOptions, now: number, where: string): DeadlineRecord | undefined {
  const { timeoutMs, deadline } = options;
  if (timeoutMs === undefined && deadline === undefined) return undefined;
  if (timeoutMs !== undefined && deadline !== undefined)
    throw new InvalidInputError(where, [
      { path: 'deadline', message: 'give timeoutMs or deadline, not both' },
    ]);
  const at =
    timeoutMs !== undefined
      ? now + parseWith(positiveDurationMsSchema, timeoutMs, where, 'timeoutMs')
      : parseWith(instantSchema, deadline, where, 'deadline');
  return { at, timerId: newId() };
}

/** Make the deadline's timer row exist (idempotent by timer id). */
export async function scheduleDeadline(
  timers: TimerStore,
  executionId: string,
  deadline: DeadlineRecord,
): Promise<void> {
  await timers.schedule({ timerId: deadline.timerId, executionId, dueAt: deadline.at });
}

/** The reason a deadline's cancellation records. */
export function deadlineReason(at: number): string {
  return `${ErrorCodes.DeadlineExceeded}: the deadline ${new Date(at).toISOString()} passed`;
}

/** The error a cancellation throws into the body: `DeadlineExceededError` when a deadline requested it. */
export function cancelledErrorOf(
  executionId: string,
  cancel: { reason: string; deadline?: number },
): CancelledError {
  return cancel.deadline === undefined
    ? new CancelledError(executionId, cancel.reason)
    : new DeadlineExceededError(executionId, cancel.reason, cancel.deadline);
}

/** What enforcing a deadline needs of the runtime. */
export interface DeadlineDeps {
  timers: TimerStore;
  /** Cancel like `runtime.cancel`, recording the deadline in `CANCEL_REQUESTED`. */
  cancel(executionId: string, reason: string, deadline: number): Promise<unknown>;
}

/**
 * At a wake-up of `state`: when its deadline passed by `now`, cancel it (unless it ended or a
 * cancellation is recorded already) and delete the deadline's row. True when this call
 * requested the cancellation.
 */
export async function enforceDeadline(
  deps: DeadlineDeps,
  state: ExecutionState,
  now: number,
): Promise<boolean> {
  const deadline = state.deadline;
  if (deadline === undefined) return false;
  if (isTerminalStatus(state.status) || state.cancel !== undefined) {
    // Nothing left to cancel: the row only needs to go (an end whose clean-up was lost).
    if (deadline.at <= now) await deps.timers.complete(deadline.timerId);
    return false;
  }
  if (deadline.at > now) return false;
  await deps.cancel(state.executionId, deadlineReason(deadline.at), deadline.at);
  // Only once the cancellation is durable: a crash before leaves the row due for the next node.
  await deps.timers.complete(deadline.timerId);
  return true;
}

/** The earlier of a suspension's wake-up and the deadline (the in-process wake-up timer's time). */
export function wakeAtWithDeadline(wakeAt: number | undefined, state: ExecutionState): number | undefined {
  const at = state.cancel === undefined ? state.deadline?.at : undefined;
  if (at === undefined) return wakeAt;
  return wakeAt === undefined ? at : Math.min(wakeAt, at);
}

/** setTimeout cannot wait longer; a farther deadline is left to the timer row alone. */
const MAX_DELAY = 2 ** 31 - 1;

/**
 * In-process: while a run of an execution with a deadline is in progress here, a timer that
 * enforces it at the instant, so a body busy in a long step is cancelled on time (the timer
 * row's wake-up waits for a run in progress here to end). The row stays the durable truth.
 */
export class DeadlineWatch {
  constructor(
    private readonly clock: () => number,
    private readonly enforce: (executionId: string) => Promise<unknown>,
    private readonly onError: (error: unknown, context: string) => void,
  ) {}

  /** Watch the run of `state` that starts now; call the returned function when it ends. */
  watch(state: ExecutionState): () => void {
    const at = state.cancel === undefined ? state.deadline?.at : undefined;
    if (at === undefined) return noop;
    const delay = Math.max(0, at - this.clock());
    if (delay > MAX_DELAY) return noop;
    const id = state.executionId;
    const timer = setTimeout(() => {
      this.enforce(id).catch((error: unknown) => this.onError(error, `deadline of execution "${id}"`));
    }, delay + 1);
    timer.unref?.();
    return () => clearTimeout(timer);
  }
}

function noop(): void {}
