/**
 * Fold: the execution state is a pure function of the log. The runtime applies each event
 * as it records it, and `fold` applies a whole log (optionally on top of a snapshot, L5).
 */
import type { ExecutionBlocked } from './blockage.js';
import type {
  CallKind,
  CarriedSignal,
  ChildSettledPayload,
  ContinuedFrom,
  DeadlineRecord,
  EventPayloads,
  EventType,
  ExecutionStatus,
  SignalReceivedPayload,
  StepCompletedPayload,
  StreamEntry,
  UpdateAppliedPayload,
} from './events.js';
import { statusAfter } from './events.js';
import { updateInboxId } from './update-inbox.js';

/** What the log says about one positional context call. */
export interface CallRecord {
  position: number;
  kind: CallKind;
  name: string;
  /**
   * `started`: in flight (or interrupted); `completed`: output recorded; `failed`: out of
   * budget; `retrying`: waiting for `retryAt`; `scheduled`: a timer waits; `fired`: it fired.
   */
  status: 'started' | 'completed' | 'failed' | 'retrying' | 'scheduled' | 'fired';
  /** Attempts started so far (steps). */
  attempts: number;
  /** Failed attempts so far (steps); the retry budget counts these. */
  failures: number;
  output?: unknown;
  error?: unknown;
  /** When the next attempt or the timer is due (ms since the epoch). */
  wakeAt?: number;
  timerId?: string;
  /** `ctx.child`: id of the child execution, once `CHILD_STARTED` is recorded. */
  childId?: string;
  /** `ctx.child`: terminal status of a child that did not complete. */
  childStatus?: ExecutionStatus;
  /** An update applied at this position (`UPDATE_APPLIED`): its id and the payload it was given. */
  updateId?: string;
  payload?: unknown;
  /**
   * Seq of the event that settled a step, sleep, signal or child call (its outcome, a fired
   * timer, a received signal, a settled child). A run hands outcomes to the body in this
   * order, live and on replay (adr/0031).
   */
  settledSeq?: number;
  /** Failures before an operator's resume reopened this step: its budget counts from here (adr/0067). */
  budgetFrom?: number;
}

/** A step whose output is in the log. */
export interface CompletedStep {
  position: number;
  name: string;
  output: unknown;
  attempts: number;
}

/** A durable timer the execution waits on. */
export interface PendingTimer {
  timerId: string;
  position: number;
  dueAt: number;
}

/**
 * The folded state of one execution. `Out` is the workflow's output type: a typed handle
 * (`runtime.handle(workflow, id).state()`) gives `ExecutionState<Out>`; read by id alone, it is
 * `unknown`.
 */
export interface ExecutionState<Out = unknown> {
  executionId: string;
  workflow: string;
  version: number;
  status: ExecutionStatus;
  /** Seq of the last event folded. */
  sequence: number;
  input: unknown;
  /** The output, once `completed`. */
  output?: Out;
  error?: unknown;
  parentId?: string;
  /** The queue the execution was enqueued into, as seq 0 records it (docs/queues.md). */
  queue?: string;
  /** With `queue`: its partition key and priority, as seq 0 records them (absent: `''` and 0). */
  partitionKey?: string;
  priority?: number;
  /** Ms since the epoch of seq 0 and of the last event. */
  startedAt: number;
  updatedAt: number;
  /** Fence of the last event. */
  fence: number;
  /** Every positional context call, by position (the replay view). */
  calls: CallRecord[];
  /** Completed `ctx.step` calls, in the order they completed. */
  steps: CompletedStep[];
  /** Ids of `ctx.patched` markers recorded. */
  patches: string[];
  /** Timers the execution waits on. */
  timers: PendingTimer[];
  /** Times the execution was taken over after an interruption (`EXECUTION_RECOVERED`). */
  recoveries: number;
  /** Ids of the signals consumed (`SIGNAL_RECEIVED`); a signal is never consumed twice. */
  consumedSignals?: string[];
  /**
   * The updates applied (`UPDATE_APPLIED`), oldest first: each id with the position whose
   * call record holds the handler's result (`output`) or error (`status: 'failed'`).
   */
  updates?: { updateId: string; position: number }[];
  /** Published events (`ctx.setEvent`): each key once, with its latest value. */
  published?: { key: string; value: unknown }[];
  /** Durable streams (`ctx.stream`): each name once, with the offset its next write gets. */
  streams?: { name: string; next: number }[];
  /** What a suspended execution waits for besides timers (from `EXECUTION_SUSPENDED`). */
  awaiting?: { signals: string[]; children: string[] };
  /**
   * Set by the first `CANCEL_REQUESTED`: its reason, and `boundary`, the number of call
   * positions the log held then. A call below it that had not settled, and the first call at
   * or past it, throw `CancelledError` (adr/0013).
   */
  cancel?: { reason: string; boundary: number; deadline?: number };
  /** Signals seq 0 carries (`signalWithStart`); a wait takes them before the inbox's. */
  startSignals?: CarriedSignal[];
  /** The deadline seq 0 records (`start(…, { timeoutMs | deadline })`), and its timer row. */
  deadline?: DeadlineRecord;
  /**
   * Why the log cannot be continued, while it still ends where a failed run found it
   * (adr/0058); attached by `runtime.loadState` from `stores.blockages`, never folded from
   * events nor kept in a snapshot.
   */
  blocked?: ExecutionBlocked;
  /** A successor of `ctx.continueAsNew`: the execution it continues, and its place in the chain. */
  continuedFrom?: ContinuedFrom;
  /** Once `continued`: the id of the successor that goes on (`EXECUTION_CONTINUED`). */
  continuedAs?: string;
  /** Operators' resumes (`EXECUTION_REDRIVEN`): how many, and the newest one's time and reason. */
  redriven?: { count: number; at: number; reason: string };
}

/**
 * The minimum an event of type `T` needs to be folded: a union keyed on `type`, like
 * `Envelope`, so the payload is the one {@link EventPayloads} gives that type. A stored event
 * becomes one through `toEnvelope` (the codec decodes what its writer recorded).
 */
export type FoldableEvent<T extends EventType = EventType> = {
  [K in T]: {
    executionId: string;
    seq: number;
    type: K;
    payload: EventPayloads[K];
    fence: number;
    /** Ms since the epoch, or a Date. */
    recordedAt: number | Date;
  };
}[T];

/** An event's type with its payload, the part of a {@link FoldableEvent} the fold reads per type. */
type TypedPayload = { [K in EventType]: { type: K; payload: EventPayloads[K] } }[EventType];

/** Apply one event to `state` (null before seq 0). Mutates and returns `state`. */
export function applyEvent(state: ExecutionState | null, event: FoldableEvent): ExecutionState {
  const at = typeof event.recordedAt === 'number' ? event.recordedAt : event.recordedAt.getTime();
  if (state === null) {
    if (event.type !== 'EXECUTION_STARTED') {
      throw new Error(
        `fold: execution "${event.executionId}" starts with ${event.type}, not EXECUTION_STARTED`,
      );
    }
    const started = event.payload;
    state = {
      executionId: event.executionId,
      workflow: started.workflow,
      version: started.version,
      status: 'pending',
      sequence: 0,
      input: started.input,
      startedAt: at,
      updatedAt: at,
      fence: event.fence,
      calls: [],
      steps: [],
      patches: [],
      timers: [],
      recoveries: 0,
    };
    if (started.parentId !== undefined) state.parentId = started.parentId;
    if (started.queue !== undefined) state.queue = started.queue;
    if (started.partitionKey !== undefined) state.partitionKey = started.partitionKey;
    if (started.priority !== undefined) state.priority = started.priority;
    if (started.continuedFrom !== undefined) state.continuedFrom = started.continuedFrom;
    if (started.deadline !== undefined) state.deadline = started.deadline;
    if (started.signals !== undefined) state.startSignals = started.signals;
    return state;
  }
  applyPayload(state, event);
  if (event.type === 'EXECUTION_REDRIVEN')
    state.redriven = { count: (state.redriven?.count ?? 0) + 1, at, reason: event.payload.reason };
  markSettled(state, event, event.seq);
  state.status = statusAfter(state.status, event.type);
  state.sequence = event.seq;
  state.updatedAt = at;
  state.fence = event.fence;
  return state;
}

function applyPayload(state: ExecutionState, event: TypedPayload): void {
  switch (event.type) {
    case 'STEP_STARTED': {
      const p = event.payload;
      const call = callAt(state, p.position, 'step', p.name);
      call.status = 'started';
      call.attempts = Math.max(call.attempts, p.attempt);
      delete call.wakeAt;
      return;
    }
    case 'STEP_COMPLETED':
      applyCompleted(state, event.payload);
      return;
    case 'STEP_FAILED': {
      const p = event.payload;
      const call = callAt(state, p.position, 'step', p.name);
      call.failures += 1;
      call.attempts = Math.max(call.attempts, p.attempt);
      call.error = p.error;
      if (p.retryAt === undefined) call.status = 'failed';
      else {
        call.status = 'retrying';
        call.wakeAt = p.retryAt;
        if (p.timerId !== undefined) {
          call.timerId = p.timerId;
          state.timers.push({ timerId: p.timerId, position: p.position, dueAt: p.retryAt });
        }
      }
      return;
    }
    case 'TIMER_SCHEDULED': {
      const p = event.payload;
      const kind = p.purpose === 'signal' || p.purpose === 'child' ? p.purpose : 'sleep';
      const call = callAt(state, p.position, kind, p.name);
      // A child's re-check timer leaves the call `started`: the child is what it waits for.
      if (kind !== 'child') call.status = 'scheduled';
      call.wakeAt = p.dueAt;
      call.timerId = p.timerId;
      state.timers.push({ timerId: p.timerId, position: p.position, dueAt: p.dueAt });
      return;
    }
    case 'TIMER_FIRED': {
      const p = event.payload;
      state.timers = state.timers.filter((timer) => timer.timerId !== p.timerId);
      const call = state.calls[p.position];
      if (call?.kind === 'sleep' || call?.kind === 'signal') call.status = 'fired';
      else if (call?.kind === 'child') clearTimer(call);
      return;
    }
    case 'UPDATE_APPLIED':
      applyUpdate(state, event.payload);
      return;
    case 'SIGNAL_RECEIVED':
    case 'CHILD_STARTED':
    case 'CHILD_SETTLED':
      applyFeatureCall(state, event);
      return;
    case 'EXECUTION_SUSPENDED': {
      const p = event.payload;
      if (p.signals !== undefined || p.children !== undefined)
        state.awaiting = { signals: p.signals ?? [], children: p.children ?? [] };
      return;
    }
    case 'EXECUTION_RESUMED':
      delete state.awaiting;
      return;
    case 'CANCEL_REQUESTED':
      state.cancel ??= {
        reason: event.payload.reason,
        boundary: state.calls.length,
        ...(event.payload.deadline === undefined ? {} : { deadline: event.payload.deadline }),
      };
      return;
    case 'EXECUTION_RECOVERED':
      delete state.awaiting;
      state.recoveries += 1;
      return;
    case 'EXECUTION_COMPLETED':
      state.output = event.payload.output;
      return;
    case 'EXECUTION_CONTINUED':
      state.continuedAs = event.payload.successorId;
      return;
    case 'EXECUTION_FAILED':
    case 'EXECUTION_CANCELLED':
    case 'EXECUTION_DEAD_LETTERED':
      state.error = event.payload.error;
      return;
    case 'EXECUTION_REDRIVEN':
      applyRedriven(state, event.payload);
      return;
    default:
      return;
  }
}

/** An operator's resume: the reopened steps run again with a fresh budget; the end is undone (adr/0067). */
function applyRedriven(state: ExecutionState, p: EventPayloads['EXECUTION_REDRIVEN']): void {
  delete state.error;
  delete state.output;
  delete state.awaiting;
  for (const { position } of p.reopened) {
    const call = state.calls[position];
    if (call?.kind !== 'step' || call.status !== 'failed') continue;
    call.status = 'retrying';
    call.budgetFrom = call.failures;
    delete call.error;
    delete call.settledSeq;
    delete call.wakeAt;
    delete call.timerId;
  }
}

/** The events that settle a call the body awaits (a retry's `STEP_FAILED` does not). */
function markSettled(state: ExecutionState, event: TypedPayload, seq: number): void {
  if (
    event.type !== 'STEP_COMPLETED' &&
    event.type !== 'STEP_FAILED' &&
    event.type !== 'TIMER_FIRED' &&
    event.type !== 'SIGNAL_RECEIVED' &&
    event.type !== 'CHILD_SETTLED' &&
    event.type !== 'UPDATE_APPLIED'
  )
    return;
  const call = state.calls[event.payload.position];
  // An update is handed to the body when it is applied, in log order like an outcome.
  if (call?.kind === 'update') {
    call.settledSeq ??= seq;
    return;
  }
  if (call === undefined || !AWAITED.has(call.kind)) return;
  if (call.status === 'completed' || call.status === 'failed' || call.status === 'fired')
    call.settledSeq ??= seq;
}

/**
 * Calls whose outcome the body awaits (a published event and a stream write resolve once
 * durable); `now`, `random`, `uuid` and patches return at once.
 */
const AWAITED: ReadonlySet<CallKind> = new Set<CallKind>([
  'step',
  'sleep',
  'signal',
  'child',
  'event',
  'stream',
  'history',
  'send',
  'cancel',
]);

/** The events of the calls of signals and children. */
type FeatureCallEvent =
  | { type: 'SIGNAL_RECEIVED'; payload: SignalReceivedPayload }
  | { type: 'CHILD_STARTED'; payload: EventPayloads['CHILD_STARTED'] }
  | { type: 'CHILD_SETTLED'; payload: ChildSettledPayload };

/** `SIGNAL_RECEIVED`, `CHILD_STARTED` and `CHILD_SETTLED`: the calls of signals and children. */
function applyFeatureCall(state: ExecutionState, event: FeatureCallEvent): void {
  if (event.type === 'SIGNAL_RECEIVED') {
    const p = event.payload;
    const call = callAt(state, p.position, 'signal', p.name);
    call.status = 'completed';
    call.output = p.payload;
    dropTimer(state, call);
    state.consumedSignals ??= [];
    state.consumedSignals.push(p.signalId);
    return;
  }
  if (event.type === 'CHILD_STARTED') {
    const p = event.payload;
    const call = callAt(state, p.position, 'child', p.name);
    call.status = 'started';
    call.childId = p.childId;
    return;
  }
  const p = event.payload;
  const call = state.calls[p.position];
  if (call === undefined) return;
  dropTimer(state, call);
  if (p.status === 'completed') {
    call.status = 'completed';
    call.output = p.output;
  } else {
    call.status = 'failed';
    call.childStatus = p.status;
    call.error = p.error;
  }
}

/**
 * `UPDATE_APPLIED`: the update's call record (its result as `output`, or its `error`), its id
 * among the applied updates, and its inbox id among the consumed signals (the inbox keeps an
 * update as a signal; see update-send.ts).
 */
function applyUpdate(state: ExecutionState, p: UpdateAppliedPayload): void {
  const call = callAt(state, p.position, 'update', p.name);
  call.updateId = p.updateId;
  call.payload = p.payload;
  if (p.error === undefined) {
    call.status = 'completed';
    call.output = p.result;
  } else {
    call.status = 'failed';
    call.error = p.error;
  }
  state.updates ??= [];
  state.updates.push({ updateId: p.updateId, position: p.position });
  state.consumedSignals ??= [];
  state.consumedSignals.push(updateInboxId(p.updateId));
}

/** Forget the timer a call waited on: it no longer wakes the execution. */
function dropTimer(state: ExecutionState, call: CallRecord): void {
  if (call.timerId !== undefined) {
    const timerId = call.timerId;
    state.timers = state.timers.filter((timer) => timer.timerId !== timerId);
  }
  clearTimer(call);
}

function clearTimer(call: CallRecord): void {
  delete call.timerId;
  delete call.wakeAt;
}

function applyCompleted(state: ExecutionState, p: StepCompletedPayload): void {
  if (p.kind === 'patch') {
    if (!state.patches.includes(p.name)) state.patches.push(p.name);
    return;
  }
  const call = callAt(state, p.position, p.kind, p.name);
  call.status = 'completed';
  delete call.wakeAt;
  // A published value or a stream entry lives in the log and the state's tables, not in the call.
  if (p.kind === 'event') publish(state, p.name, p.output);
  else if (p.kind === 'stream') advanceStream(state, p.name, call, p.output as StreamEntry);
  else call.output = p.output;
  if (p.kind === 'step') {
    call.attempts = Math.max(call.attempts, p.attempt ?? 1);
    state.steps.push({ position: p.position, name: p.name, output: p.output, attempts: call.attempts });
  }
}

function publish(state: ExecutionState, key: string, value: unknown): void {
  state.published ??= [];
  const entry = state.published.find((published) => published.key === key);
  if (entry === undefined) state.published.push({ key, value });
  else entry.value = value;
}

function advanceStream(state: ExecutionState, name: string, call: CallRecord, entry: StreamEntry): void {
  call.output = entry.offset;
  state.streams ??= [];
  const stream = state.streams.find((known) => known.name === name);
  if (stream === undefined) state.streams.push({ name, next: entry.offset + 1 });
  else stream.next = Math.max(stream.next, entry.offset + 1);
}

function callAt(state: ExecutionState, position: number, kind: CallKind, name: string): CallRecord {
  let call = state.calls[position];
  if (call === undefined) {
    call = { position, kind, name, status: 'started', attempts: 0, failures: 0 };
    state.calls[position] = call;
  }
  return call;
}

/**
 * Fold a log into its state. With `from` (a snapshot's state), `events` are the ones after
 * the snapshot's seq (L5: the result equals folding the whole log).
 */
export function fold(
  events: Iterable<FoldableEvent>,
  from: ExecutionState | null = null,
): ExecutionState | null {
  let state = from;
  for (const event of events) state = applyEvent(state, event);
  return state;
}
