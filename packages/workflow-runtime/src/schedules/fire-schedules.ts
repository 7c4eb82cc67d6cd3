/**
 * Firing due schedules (docs/schedules.md): read a schedule's state, decide which passed due
 * times run (catch-up, overlap), enqueue one execution per due time under the id derived from
 * it, and move the state on compare-and-set. Two nodes firing at once start nothing twice: the
 * ids are the same, and an enqueue of an id that exists returns the existing execution.
 */
import { InvalidInputError } from '../errors.js';
import { isTerminalStatus } from '../events.js';
import type { EventStore } from '../spi.js';
import { type ScheduleDefinition, scheduledExecutionId } from './define-schedule.js';
import type { ScheduleState, ScheduleStore } from './schedule-spi.js';

/** Most passed due times one pass looks at (the rest wait for the next pass). */
const MAX_DUE_PER_PASS = 1_000;

/** What firing needs from the runtime. */
export interface FireDeps {
  schedules: ScheduleStore;
  events: EventStore;
  /** Enqueue the schedule's workflow under `executionId` (an existing id is left as it is). */
  enqueue(schedule: ScheduleDefinition, executionId: string): Promise<void>;
}

/** The schedule store of `stores`, or `InvalidInputError` naming what is missing. */
export function scheduleStoreOf(stores: { schedules?: ScheduleStore }, where: string): ScheduleStore {
  if (stores.schedules === undefined)
    throw new InvalidInputError(where, [
      { path: 'stores.schedules', message: 'these stores keep no schedules' },
    ]);
  return stores.schedules;
}

/** The state of `schedule`, created (first due time after `now`) when it has none. */
export async function stateOf(
  store: ScheduleStore,
  schedule: ScheduleDefinition,
  now: number,
): Promise<ScheduleState | null> {
  const found = await store.get(schedule.name);
  if (found !== null) return found;
  const first = schedule.dueAfter(now);
  if (first === null) return null;
  const fresh: ScheduleState = { name: schedule.name, nextDueAt: first, paused: false, revision: 1 };
  return (await store.save(null, fresh)) ? fresh : store.get(schedule.name);
}

/** Fire what is due of one schedule at `now`; resolves with the execution ids it enqueued. */
export async function fireSchedule(
  deps: FireDeps,
  schedule: ScheduleDefinition,
  now: number,
): Promise<string[]> {
  const state = await stateOf(deps.schedules, schedule, now);
  if (state === null || state.paused) return [];
  const fired: string[] = [];
  const next: ScheduleState = { ...state, revision: state.revision + 1 };
  const fire = async (dueAt: number) => {
    const id = scheduledExecutionId(schedule.name, dueAt);
    await deps.enqueue(schedule, id);
    next.lastExecutionId = id;
    fired.push(id);
  };
  if (next.bufferedDueAt !== undefined && !(await unfinished(deps.events, next.lastExecutionId))) {
    const buffered = next.bufferedDueAt;
    delete next.bufferedDueAt;
    await fire(buffered);
  }
  if (state.nextDueAt > now) return fired.length === 0 ? [] : saved(deps, state, next, fired);
  const passed: number[] = [];
  let after: number | null = state.nextDueAt;
  while (after !== null && after <= now && passed.length < MAX_DUE_PER_PASS) {
    passed.push(after);
    after = schedule.dueAfter(after);
  }
  for (const dueAt of chosen(schedule, passed, after, now)) {
    if (schedule.overlap !== 'allow' && (await unfinished(deps.events, next.lastExecutionId))) {
      if (schedule.overlap === 'buffer-one' && next.bufferedDueAt === undefined) next.bufferedDueAt = dueAt;
      continue;
    }
    await fire(dueAt);
  }
  // No due time left (a cron pattern that ends): park it far in the future.
  next.nextDueAt = after ?? Number.MAX_SAFE_INTEGER;
  return saved(deps, state, next, fired);
}

/** Of the passed due times, those the catch-up policy runs. */
function chosen(schedule: ScheduleDefinition, passed: number[], after: number | null, now: number): number[] {
  const caughtUp = after === null || after > now; // false: more passed than one pass looks at
  if (schedule.catchUp === 'all') return passed;
  if (!caughtUp) return [];
  if (schedule.catchUp === 'latest') return passed.slice(-1);
  // 'none': one due time passed is the normal lateness of a tick; more mean every node was down.
  return passed.length === 1 ? passed : [];
}

async function saved(
  deps: FireDeps,
  state: ScheduleState,
  next: ScheduleState,
  fired: string[],
): Promise<string[]> {
  // Lost to another node that moved it first: the executions are the same ids, nothing doubles.
  await deps.schedules.save(state.revision, next);
  return fired;
}

async function unfinished(events: EventStore, executionId: string | undefined): Promise<boolean> {
  if (executionId === undefined) return false;
  const summary = await events.getExecution(executionId);
  return summary !== null && !isTerminalStatus(summary.status);
}

/** Pause (`paused: true`) or resume a schedule; a resume skips the due times that passed while paused. */
export async function setPaused(
  store: ScheduleStore,
  schedule: ScheduleDefinition,
  paused: boolean,
  now: number,
): Promise<ScheduleState> {
  for (;;) {
    const state = await stateOf(store, schedule, now);
    if (state === null)
      throw new InvalidInputError('schedule', [{ path: schedule.name, message: 'has no due time left' }]);
    if (state.paused === paused) return state;
    const next: ScheduleState = { ...state, paused, revision: state.revision + 1 };
    if (!paused) next.nextDueAt = schedule.dueAfter(now) ?? Number.MAX_SAFE_INTEGER;
    if (await store.save(state.revision, next)) return next;
  }
}
