/**
 * Resident bodies (adr/0068): a bounded cache of the bodies of executions that suspended in
 * this process, kept in memory with the calls they block on, so that a resume here goes on
 * from where the body waits instead of replaying it from the start.
 *
 * A body is resumed in memory only when the log is exactly what it last saw: the log's last
 * seq is the one its suspension wrote, and no fence newer than the one it wrote with exists
 * (no other process took the execution over, not even without writing). Anything else (the
 * body was evicted, another process or runtime wrote, a fence was taken, the version this
 * runtime runs for it changed, a cancellation was recorded) drops it, and the execution is
 * replayed from its log as without the cache. A body is taken out of the cache for each
 * resume and put back only once its next suspension is durable, so a run that fails or ends
 * is never resumed again. Least recently suspended bodies are evicted first; dropping one
 * drops every reference to it, so its frames (and whatever they hold) are garbage.
 */
import { z } from 'zod';
import type { ExecutionRun, RunOutcome } from './execution-run.js';
import type { ExecutionState } from './fold.js';
import type { EventStore } from './spi.js';
import { parseWith } from './workflow.js';

/** Resident bodies kept when `createRuntime({ cache })` does not say (Temporal's sticky cache is of this order). */
export const DEFAULT_MAX_RESIDENT = 1_000;

/** Options of the resident-body cache (`createRuntime({ cache })`). */
export interface CacheOptions {
  /**
   * Most suspended bodies kept in memory, an integer >= 0; the least recently suspended is
   * dropped past it, and 0 turns the cache off (every resume replays; default: 1 000).
   */
  maxResident?: number;
}

const cacheOptionsSchema = z
  .object({ maxResident: z.number().int().min(0).optional() })
  .strict()
  .optional();

/** `createRuntime({ cache })` checked: the most bodies to keep resident. */
export function maxResidentOf(options: unknown): number {
  const parsed = parseWith(cacheOptionsSchema, options, 'createRuntime options', 'cache');
  return parsed?.maxResident ?? DEFAULT_MAX_RESIDENT;
}

/** A body suspended here, and the log as it left it. */
export interface Resident {
  run: ExecutionRun;
  /** The state its suspension made durable (its `sequence` and `fence` are the log's then). */
  state: ExecutionState;
  /** Settles once the after-run work of the suspension (timer rows, consumed signals) is done. */
  afterWork: Promise<unknown>;
}

/** The LRU cache of resident bodies of one runtime; see the module comment. */
export class ResidentBodies {
  private readonly entries = new Map<string, Resident>();
  /**
   * Runs going on now, by execution: a run that is writing its suspension lands in the cache
   * moments later, and {@link state} waits for that rather than folding the log.
   */
  private readonly landing = new Map<string, ExecutionRun>();
  /** Callers of {@link state} waiting for a run to land (only while one waits). */
  private readonly waiters = new Map<ExecutionRun, (() => void)[]>();

  constructor(
    readonly maxResident: number,
    private readonly events: EventStore,
  ) {}

  /** Number of bodies resident now. */
  get size(): number {
    return this.entries.size;
  }

  /** Keep `resident` (the newest); evict the least recently kept past the bound. */
  keep(resident: Resident): void {
    if (this.maxResident === 0) return;
    const id = resident.run.executionId;
    this.entries.delete(id);
    this.entries.set(id, resident);
    while (this.entries.size > this.maxResident) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  /**
   * Keep `run` when it suspended cleanly. Returns, when it was kept, the function to call once
   * its after-run work is done (a resume waits for that: the work reads the run's arrays of
   * fired timers and signals).
   */
  keepSuspended(run: ExecutionRun, outcome: RunOutcome): (() => void) | undefined {
    if (outcome.kind !== 'suspended' || this.maxResident === 0 || !run.resumable) return undefined;
    let done!: () => void;
    const afterWork = new Promise<void>((resolve) => {
      done = resolve;
    });
    this.keep({ run, state: outcome.state, afterWork });
    return done;
  }

  /**
   * `run` goes on now; until {@link landed} is called for it (once it was kept, or not, or it
   * failed), a caller of {@link state} waits for it when the run is suspending.
   */
  running(run: ExecutionRun): void {
    if (this.maxResident === 0) return;
    this.landing.set(run.executionId, run);
  }

  /** `run` (of {@link running}) was kept or will not be. */
  landed(run: ExecutionRun): void {
    if (this.maxResident === 0) return;
    if (this.landing.get(run.executionId) === run) this.landing.delete(run.executionId);
    const waiting = this.waiters.get(run);
    if (waiting === undefined) return;
    this.waiters.delete(run);
    for (const wake of waiting) wake();
  }

  /** Resolves once `run` has landed. */
  private untilLanded(run: ExecutionRun): Promise<void> {
    return new Promise((resolve) => {
      const waiting = this.waiters.get(run);
      if (waiting === undefined) this.waiters.set(run, [resolve]);
      else waiting.push(resolve);
    });
  }

  /**
   * The state of a resident body's execution when its log is still the one it suspended on
   * (two indexed reads, not a fold of the log), forked so a run may fold into it; undefined
   * when no body is resident or the log moved (then the body is dropped).
   */
  async state(executionId: string): Promise<ExecutionState | undefined> {
    const state = await this.unchanged(executionId);
    return state === undefined ? undefined : forkState(state);
  }

  /**
   * As {@link state}, but the resident state itself, not a fork: for a caller that only reads
   * it (nothing may fold into it or change it; fork it with {@link forkState} first). A body
   * writing its suspension now is waited for (one write), so a caller that heard of the
   * suspension (an observer, the log) at once finds the body, not a miss that folds the log.
   */
  async unchanged(executionId: string): Promise<ExecutionState | undefined> {
    let resident = this.entries.get(executionId);
    if (resident === undefined) {
      const landing = this.landing.get(executionId);
      if (landing === undefined || !landing.suspending) return undefined;
      await this.untilLanded(landing);
      resident = this.entries.get(executionId);
      if (resident === undefined) return undefined;
    }
    if (await logUnchanged(this.events, resident)) return resident.state;
    if (this.entries.get(executionId) === resident) this.entries.delete(executionId);
    return undefined;
  }

  /**
   * Take the resident body of `current`'s execution out of the cache, and return it when it
   * may go on as the run that `plain` resume makes under `fence` ({@link residentFits});
   * otherwise it is dropped and undefined returned (the execution replays).
   */
  takeFitting(
    current: ExecutionState,
    fence: number,
    definition: unknown,
    plain: boolean,
  ): Resident | undefined {
    const resident = this.take(current.executionId);
    return plain && resident !== undefined && residentFits(resident, current, fence, definition)
      ? resident
      : undefined;
  }

  /** Take the resident body of `executionId` out of the cache (undefined when none). */
  take(executionId: string): Resident | undefined {
    const resident = this.entries.get(executionId);
    if (resident !== undefined) this.entries.delete(executionId);
    return resident;
  }

  /** Drop every resident body (the runtime closes). */
  clear(): void {
    this.entries.clear();
    this.landing.clear();
  }
}

/**
 * True when the log of `resident`'s execution is still exactly the one it suspended on: the
 * same last seq, still suspended, and no fence newer than its own. Two indexed reads, whatever
 * the log's length.
 */
export async function logUnchanged(events: EventStore, resident: Resident): Promise<boolean> {
  const { executionId, sequence, fence } = resident.state;
  const [summary, current] = await Promise.all([
    events.getExecution(executionId),
    events.currentFence(executionId),
  ]);
  return (
    summary !== null && summary.sequence === sequence && summary.status === 'suspended' && current <= fence
  );
}

/**
 * Whether `resident` may go on as the run of `current` under `fence`: the state a caller
 * loaded (or forked) is at the seq and fence it suspended with, nothing cancels it, and the
 * definition this runtime runs for that version is the body's own.
 */
export function residentFits(
  resident: Resident,
  current: ExecutionState,
  fence: number,
  definition: unknown,
): boolean {
  const { state, run } = resident;
  return (
    current.status === 'suspended' &&
    current.sequence === state.sequence &&
    current.cancel === undefined &&
    fence === state.fence &&
    current.version === run.version &&
    definition === run.definition &&
    run.resumable
  );
}

/**
 * Per `calls` array made by {@link forkState}: every record below this position is settled for
 * good, so a fork of that array copies none of them and checks none of them again.
 */
const settledBelow = new WeakMap<readonly unknown[], number>();

/**
 * A copy of `state` that later events can be folded into without changing `state` (the fold
 * mutates in place, and `state` was handed out as a suspension's outcome). Arrays are copied;
 * call records are shared once settled for good (nothing folds into them any more), copied
 * otherwise. Settled for good stays so: a fork of a fork checks only the records past the
 * first one its source left unsettled (or a hole), so a resident resume does not look at
 * every call of a long log. Copying references only, it costs microseconds for logs of
 * thousands of calls.
 */
export function forkState(state: ExecutionState): ExecutionState {
  const calls = state.calls.slice();
  let settled = settledBelow.get(state.calls) ?? 0;
  while (settled < calls.length && settledForGood(calls[settled])) settled++;
  for (let i = settled; i < calls.length; i++) {
    const call = calls[i];
    if (call !== undefined && !settledForGood(call)) calls[i] = { ...call };
  }
  settledBelow.set(calls, settled);
  const fork: ExecutionState = {
    ...state,
    calls,
    steps: state.steps.slice(),
    patches: state.patches.slice(),
    timers: state.timers.slice(),
  };
  if (state.consumedSignals !== undefined) fork.consumedSignals = state.consumedSignals.slice();
  if (state.updates !== undefined) fork.updates = state.updates.slice();
  if (state.published !== undefined) fork.published = state.published.map((entry) => ({ ...entry }));
  if (state.streams !== undefined) fork.streams = state.streams.map((entry) => ({ ...entry }));
  return fork;
}

function settledForGood(call: { status: string } | undefined): boolean {
  return (
    call !== undefined && (call.status === 'completed' || call.status === 'failed' || call.status === 'fired')
  );
}
