/**
 * `ctx.step`: the step's recorded outcome on replay, or an attempt now. An attempt makes
 * `STEP_STARTED` durable before the function runs, then records its output, or its failure
 * with a retry timer while the policy allows another attempt (a spent budget, or an error
 * that no retry can fix, fails the step). It reaches its run only through `StepRun`.
 */

import type { StepInfo, StepOptions } from './context-api.js';
import { DestinationShares, destinationNameSchema } from './destination-shares.js';
import { optionalPositiveMs } from './durations.js';
import {
  NonDeterminismError,
  NonRetryableError,
  PayloadTooLargeError,
  SerializationError,
  StepFailedError,
  StepTimeoutError,
} from './errors.js';
import type { CallKind, EventType } from './events.js';
import type { CallRecord, ExecutionState } from './fold.js';
import { newId } from './ids.js';
import type { LogWriter } from './log-writer.js';
import { recordableError, shrunkError } from './recordable-error.js';
import { checkedRetryPolicy, resolveRetryPolicy } from './retry.js';
import { checkedRetryControls, decideRetry, type StepRetryPolicy } from './retry-controls.js';
import { StepAbort } from './step-abort.js';
import { parseWith } from './workflow.js';

/** The run as a step call sees it. */
export interface StepRun {
  readonly executionId: string;
  readonly writer: LogWriter;
  clock(): number;
  /** The aborts of the step functions running now (their `StepInfo.signal`). */
  readonly running: Set<StepAbort>;
  /** The runtime's destination shares (a step that declared a destination holds one while it runs). */
  readonly destinations: DestinationShares | undefined;
  /** Take the next position (throws NonDeterminismError, or CancelledError when cancelled). */
  next(kind: CallKind, name: string): { position: number; record: CallRecord | undefined };
  /** Wait forever; the run suspends once every branch waits. */
  block(wakeAt: number | undefined, timerId: string | undefined): Promise<never>;
  /** Record that a timer fired (`TIMER_FIRED`); its row is deleted after the run. */
  fireTimer(timerId: string | undefined, position: number): void;
  /** One piece of work more in flight: the run does not suspend meanwhile. */
  enterFlight(): void;
  /** One piece of work less in flight; with none left, the run may suspend if every branch waits. */
  leaveFlight(): void;
  /** Throw when the run ended or can no longer write. */
  assertUsable(): void;
}

/** See the module comment. */
export async function runStep<T>(
  run: StepRun,
  name: string,
  fn: (info: StepInfo) => T | Promise<T>,
  given: StepOptions,
): Promise<T> {
  const options = stepOptions(name, given);
  const { position, record } = run.next('step', name);
  if (record?.status === 'completed') return record.output as T;
  if (record?.status === 'failed') {
    throw new StepFailedError(run.executionId, name, record.attempts, { cause: record.error });
  }
  if (record?.status === 'retrying' && record.wakeAt !== undefined) {
    if (record.wakeAt > run.clock()) return run.block(record.wakeAt, record.timerId);
    run.fireTimer(record.timerId, position);
  }
  const rerun = record?.status === 'started';
  const budget = { attempt: (record?.failures ?? 0) + 1, base: record?.budgetFrom ?? 0 };
  return attemptStep(run, position, name, fn, options, budget, rerun);
}

async function attemptStep<T>(
  run: StepRun,
  position: number,
  name: string,
  fn: (info: StepInfo) => T | Promise<T>,
  options: StepOptions,
  budget: { attempt: number; base: number },
  rerun = false,
): Promise<T> {
  const { attempt } = budget;
  let retry: { wakeAt: number; timerId: string };
  run.enterFlight();
  try {
    run.writer.record('STEP_STARTED', { position, name, attempt }, `start of step "${name}"`);
    await run.writer.flush();
    // The body may have returned meanwhile (this step lost a race): do not start the function.
    run.assertUsable();
    try {
      const output = await invoke(run, name, fn, options, attempt, rerun);
      run.assertUsable();
      const state = run.writer.record(
        'STEP_COMPLETED',
        { position, name, kind: 'step', output, attempt },
        `output of step "${name}"`,
      );
      // The output as the log holds it, as a replay returns it (adr/0020).
      return state.calls[position]?.output as T;
    } catch (error) {
      run.assertUsable();
      retry = stepFailed(run, position, name, options, budget, error);
    }
  } finally {
    run.leaveFlight();
  }
  // Out of flight before blocking, so the execution can suspend while it waits.
  return run.block(retry.wakeAt, retry.timerId);
}

async function invoke<T>(
  run: StepRun,
  name: string,
  fn: (info: StepInfo) => T | Promise<T>,
  options: StepOptions,
  attempt: number,
  rerun: boolean,
): Promise<T> {
  const { timeoutMs, destination } = options;
  const controller = new StepAbort();
  const info: StepInfo = new AttemptInfo(attempt, rerun, run.executionId, controller);
  // Its share while this attempt runs (adr/0057): joined here, given back when it ends.
  const holder =
    destination === undefined ? undefined : (run.destinations ?? new DestinationShares()).join(destination);
  if (holder !== undefined) {
    info.destination = holder.destination;
    info.share = () => holder.share();
  }
  run.running.add(controller);
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    if (timeoutMs === undefined) return await fn(info);
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = new StepTimeoutError(name, timeoutMs);
        controller.abort(error);
        reject(error);
      }, timeoutMs);
    });
    return await Promise.race([(async () => fn(info))(), timeout]);
  } finally {
    clearTimeout(timer);
    run.running.delete(controller);
    holder?.leave();
  }
}

/**
 * Record a failed attempt with the policy's decision (adr/0066): throw StepFailedError when it
 * is not retried, else return when to retry. `budget.base` counts the failures before an
 * operator's resume, which gave the step a fresh budget.
 */
function stepFailed(
  run: StepRun,
  position: number,
  name: string,
  options: StepOptions,
  budget: { attempt: number; base: number },
  error: unknown,
): { wakeAt: number; timerId: string } {
  const { attempt } = budget;
  const policy: StepRetryPolicy = options.retry ?? {};
  const key = `${run.executionId}#${position}`;
  const used = attempt - budget.base;
  const decision = decideRetry(
    policy,
    resolveRetryPolicy(policy),
    error,
    attempt,
    used,
    isUnretryable(error),
    key,
  );
  const where = `error of step "${name}"`;
  if (!decision.retry) {
    const why = {
      noRetry: decision.reason,
      ...(decision.thrown === undefined ? {} : { shouldRetryThrew: decision.thrown }),
    };
    const state = recordFailure(run.writer, 'STEP_FAILED', error, where, (recorded) => ({
      position,
      name,
      attempt,
      error: recorded,
      ...why,
    }));
    // The cause as the log holds it, as a replay throws it (adr/0020).
    throw new StepFailedError(run.executionId, name, attempt, { cause: state.calls[position]?.error });
  }
  const retryAt = run.clock() + decision.delayMs;
  const timerId = newId();
  const asked = decision.retryAfterMs === undefined ? {} : { retryAfterMs: decision.retryAfterMs };
  recordFailure(run.writer, 'STEP_FAILED', error, where, (recorded) => ({
    position,
    name,
    attempt,
    error: recorded,
    retryAt,
    timerId,
    delayMs: decision.delayMs,
    ...asked,
  }));
  return { wakeAt: retryAt, timerId };
}

/**
 * Record a failure with `error` as the log can hold it; an error over the payload limit is
 * recorded cut down, so that a failure is always recorded.
 */
export function recordFailure(
  writer: LogWriter,
  type: EventType,
  error: unknown,
  where: string,
  payload: (recorded: unknown) => object,
): ExecutionState {
  const recorded = recordableError(error);
  try {
    return writer.record(type, payload(recorded), where);
  } catch (refused) {
    if (!(refused instanceof PayloadTooLargeError)) throw refused;
    return writer.record(type, payload(shrunkError(recorded, refused.limit)), where);
  }
}

/**
 * The `StepInfo` of one attempt. A class, not an object literal: a literal with a getter is
 * built on V8's slow path, ~0.6 µs a step against ~0.03 µs for this (adr/0097). The signal
 * is a getter on the prototype, made only when the function reads it (step-abort.ts).
 */
class AttemptInfo implements StepInfo {
  attempt: number;
  rerun: boolean;
  executionId: string;
  // Set only for a step with a destination: no own property otherwise, as before.
  declare destination?: string;
  declare share?: () => number;
  readonly #abort: StepAbort;

  constructor(attempt: number, rerun: boolean, executionId: string, abort: StepAbort) {
    this.attempt = attempt;
    this.rerun = rerun;
    this.executionId = executionId;
    this.#abort = abort;
  }

  get signal(): AbortSignal {
    return this.#abort.signal;
  }
}

const NO_OPTIONS: StepOptions = Object.freeze({});

/** A step's options checked at the call: durations whole ms (adr/0032), a valid retry policy, a destination name. */
function stepOptions(name: string, options: StepOptions): StepOptions {
  // The common call passes none: nothing to check, no message to build, no copy to make.
  if (options.timeoutMs === undefined && options.retry === undefined && options.destination === undefined)
    return NO_OPTIONS;
  const where = `ctx.step("${name}") options`;
  const timeoutMs = optionalPositiveMs(options.timeoutMs, where, 'timeoutMs');
  const retry =
    options.retry === undefined
      ? undefined
      : { ...checkedRetryPolicy(options.retry, where), ...checkedRetryControls(options.retry, where) };
  const destination =
    options.destination === undefined
      ? undefined
      : parseWith(destinationNameSchema, options.destination, where, 'destination');
  return {
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(retry === undefined ? {} : { retry }),
    ...(destination === undefined ? {} : { destination }),
  };
}

function isUnretryable(error: unknown): boolean {
  try {
    return (
      error instanceof NonRetryableError ||
      error instanceof SerializationError ||
      error instanceof PayloadTooLargeError ||
      error instanceof NonDeterminismError
    );
  } catch {
    // A revoked proxy has no prototype to test: it is no error of these, so the policy decides.
    return false;
  }
}
