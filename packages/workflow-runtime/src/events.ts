/** The event model (docs/architecture.md#the-log): envelope, event types, statuses. */

/** Every event type the log may hold. */
export const EventTypes = [
  'EXECUTION_STARTED',
  'EXECUTION_RECOVERED',
  'STEP_STARTED',
  'STEP_COMPLETED',
  'STEP_FAILED',
  'TIMER_SCHEDULED',
  'TIMER_FIRED',
  'SIGNAL_RECEIVED',
  'UPDATE_APPLIED',
  'CHILD_STARTED',
  'CHILD_SETTLED',
  'EXECUTION_SUSPENDED',
  'EXECUTION_RESUMED',
  'CANCEL_REQUESTED',
  'EXECUTION_COMPLETED',
  'EXECUTION_FAILED',
  'EXECUTION_CANCELLED',
  'EXECUTION_DEAD_LETTERED',
  'EXECUTION_CONTINUED',
  'EXECUTION_REDRIVEN',
] as const;

/** One of {@link EventTypes}. */
export type EventType = (typeof EventTypes)[number];

/** Status of an execution, as folded from its log. */
export type ExecutionStatus =
  | 'pending'
  | 'running'
  | 'suspended'
  | 'completed'
  | 'failed'
  | 'cancelled'
  | 'dead_lettered'
  | 'continued';

/** Every status, in lifecycle order. */
export const ExecutionStatuses: readonly ExecutionStatus[] = [
  'pending',
  'running',
  'suspended',
  'completed',
  'failed',
  'cancelled',
  'dead_lettered',
  'continued',
];

const terminalTypes = new Set<EventType>([
  'EXECUTION_COMPLETED',
  'EXECUTION_FAILED',
  'EXECUTION_CANCELLED',
  'EXECUTION_DEAD_LETTERED',
  'EXECUTION_CONTINUED',
]);

/**
 * L6: true for the event types after which nothing may be appended, but an operator's
 * `EXECUTION_REDRIVEN` after `_FAILED` or `_DEAD_LETTERED` (see {@link reopensTerminal}).
 */
export function isTerminalType(type: string): boolean {
  return terminalTypes.has(type as EventType);
}

/** True for `completed`, `failed`, `cancelled`, `dead_lettered` and `continued`. */
export function isTerminalStatus(status: ExecutionStatus): boolean {
  return (
    status === 'completed' ||
    status === 'failed' ||
    status === 'cancelled' ||
    status === 'dead_lettered' ||
    status === 'continued'
  );
}

/**
 * True when an append whose first event is `firstType` may follow an execution that is
 * `status`: `EXECUTION_REDRIVEN` (`runtime.resume`) reopens a failed or dead-lettered one
 * (adr/0067). Every store's terminal check goes through this.
 */
export function reopensTerminal(status: ExecutionStatus, firstType: string | undefined): boolean {
  return firstType === 'EXECUTION_REDRIVEN' && (status === 'failed' || status === 'dead_lettered');
}

/** True for a known event type. */
export function isEventType(type: string): type is EventType {
  return (EventTypes as readonly string[]).includes(type);
}

/**
 * The status an execution has after an event of `type` is appended. Stores use this to keep
 * their status index, so every store derives statuses the same way the fold does.
 */
export function statusAfter(current: ExecutionStatus | undefined, type: EventType): ExecutionStatus {
  switch (type) {
    case 'EXECUTION_STARTED':
      return 'pending';
    case 'EXECUTION_SUSPENDED':
      return 'suspended';
    case 'EXECUTION_COMPLETED':
      return 'completed';
    case 'EXECUTION_FAILED':
      return 'failed';
    case 'EXECUTION_CANCELLED':
      return 'cancelled';
    case 'EXECUTION_DEAD_LETTERED':
      return 'dead_lettered';
    case 'EXECUTION_CONTINUED':
      return 'continued';
    case 'CANCEL_REQUESTED':
      return current ?? 'pending';
    default:
      return 'running';
  }
}

/**
 * A recorded event of type `T`, decoded. `seq` is dense from 0; `fence` is the writer's fence;
 * `envelopeId` is a ULID. `Envelope` (every type) is a union keyed on `type`, so a
 * `switch (envelope.type)` narrows `payload` to that type's entry of {@link EventPayloads}.
 * @example
 * for (const event of await runtime.history('order-42'))
 *   if (event.type === 'STEP_COMPLETED') console.log(event.payload.name, event.payload.output);
 */
export type Envelope<T extends EventType = EventType> = {
  [K in T]: {
    executionId: string;
    seq: number;
    envelopeId: string;
    type: K;
    payload: EventPayloads[K];
    fence: number;
    recordedAt: Date;
  };
}[T];

/** An event as a store keeps it: the payload is the codec's text. */
export interface StoredEvent {
  executionId: string;
  seq: number;
  envelopeId: string;
  type: EventType;
  payload: string;
  fence: number;
  /** Milliseconds since the epoch. */
  recordedAt: number;
}

/** Kinds of positional context calls. */
export type CallKind =
  | 'step'
  | 'now'
  | 'random'
  | 'uuid'
  | 'sleep'
  | 'signal'
  | 'child'
  | 'update'
  | 'event'
  | 'stream'
  | 'history'
  | 'continue'
  | 'send'
  | 'cancel';

/** Payload of `EXECUTION_STARTED`. */
export interface StartedPayload {
  workflow: string;
  version: number;
  input: unknown;
  parentId?: string;
  /** Set on an execution enqueued into a queue: the queue's name (its item leaves the queue at the execution's end). */
  queue?: string;
  /** With `queue`: the partition key it counts against, when not the shared one (`''`). */
  partitionKey?: string;
  /** With `queue`: its priority, when not 0. */
  priority?: number;
  /** Set on the successor of a `ctx.continueAsNew`: the execution it continues (docs/continue-as-new.md). */
  continuedFrom?: ContinuedFrom;
  /**
   * The execution's deadline (`start(…, { timeoutMs | deadline })`): the instant, and the id of
   * the durable timer row that fires it (docs/cancellation.md#deadlines).
   */
  deadline?: DeadlineRecord;
  /** Signals sent with the start (`signalWithStart`), delivered by this very append. */
  signals?: CarriedSignal[];
  /** Set on a fork (`runtime.fork`): the source and the step it runs again from (adr/0067). */
  forkedFrom?: { executionId: string; fromStep: string; position: number };
}

/** A signal seq 0 carries (`signalWithStart`); `payload` is the codec's text, as the inbox keeps it. */
export interface CarriedSignal {
  signalId: string;
  name: string;
  payload: string;
  /** Ms since the epoch. */
  sentAt: number;
}

/** A deadline as seq 0 records it. */
export interface DeadlineRecord {
  /** Ms since the epoch. */
  at: number;
  timerId: string;
}

/** Where a successor of `ctx.continueAsNew` sits in its chain. */
export interface ContinuedFrom {
  /** The execution that continued as this one. */
  executionId: string;
  /** Id of the chain's first execution. */
  root: string;
  /** 1 for the root's successor, one more for each continue after it. */
  generation: number;
}

/**
 * Payload of `EXECUTION_CONTINUED` (terminal): the execution ended by `ctx.continueAsNew`, and
 * `successorId`, whose seq 0 was durable before this was written, goes on with the new input.
 */
export interface ContinuedPayload {
  successorId: string;
  /** The call position of the `ctx.continueAsNew` that ended it. */
  position: number;
}

/** Payload of `STEP_STARTED`. */
export interface StepStartedPayload {
  position: number;
  name: string;
  attempt: number;
}

/**
 * Payload of `STEP_COMPLETED`; also records `now`, `random`, `uuid` values, patch markers,
 * published events (`kind: 'event'`, `name` the key, `output` the value) and stream writes
 * (`kind: 'stream'`, `name` the stream, `output` a {@link StreamEntry}), signals sent to other
 * executions (`kind: 'send'`, `name` the signal, `output` `{ ok: SentSignal }` or `{ refused: error }`)
 * and a child handle's cancellation (`kind: 'cancel'`, `name` the child's id).
 */
export interface StepCompletedPayload {
  position: number;
  name: string;
  kind: CallKind | 'patch';
  output: unknown;
  attempt?: number;
}

/** What a stream write records (the `output` of its `STEP_COMPLETED`) and a reader gets. */
export interface StreamEntry {
  /** 0 for the stream's first write, dense after it. */
  offset: number;
  value: unknown;
}

/** Payload of `STEP_FAILED`. `retryAt` is set while the retry budget lasts. */
export interface StepFailedPayload {
  position: number;
  name: string;
  attempt: number;
  error: unknown;
  retryAt?: number;
  /** The durable timer that wakes the execution at `retryAt`. */
  timerId?: string;
  /** With `retryAt`: the delay chosen, the backoff's or the error's own (adr/0066). */
  delayMs?: number;
  /** With `retryAt`: the `retryAfterMs` the error asked for (`delayMs` may be bounded below it). */
  retryAfterMs?: number;
  /** Without `retryAt`: why the step was not retried. */
  noRetry?: 'budget' | 'non-retryable' | 'should-retry' | 'should-retry-threw';
  /** With `noRetry: 'should-retry-threw'`: what the predicate threw. */
  shouldRetryThrew?: string;
}

/** Payload of `TIMER_SCHEDULED`. */
export interface TimerScheduledPayload {
  position: number;
  name: string;
  timerId: string;
  dueAt: number;
  /**
   * `sleep` for ctx.sleep, `signal` for the timeout of ctx.waitForSignal, `child` for the
   * periodic re-check of a child ctx.child waits on. A step's retry timer has no
   * `TIMER_SCHEDULED`: its `STEP_FAILED` records it (`retryAt`, `timerId`).
   */
  purpose: 'sleep' | 'signal' | 'child';
}

/** Payload of `TIMER_FIRED`. */
export interface TimerFiredPayload {
  timerId: string;
  position: number;
}

/** Payload of `EXECUTION_RECOVERED` and `EXECUTION_RESUMED`. */
export interface TakeoverPayload {
  reason: string;
  fence: number;
  /**
   * On `EXECUTION_RECOVERED`: true when the execution was `pending` (enqueued work claimed by a
   * node, not a dead owner's run recovered), so counters can tell claims from recoveries.
   */
  claimed?: boolean;
}

/** Payload of `EXECUTION_SUSPENDED`. */
export interface SuspendedPayload {
  reason: string;
  wakeAt?: number;
  /** Names of the signals a `ctx.waitForSignal` waits for (a sender wakes the execution). */
  signals?: string[];
  /** Ids of the children a `ctx.child` waits for (their end wakes the execution). */
  children?: string[];
}

/** Payload of `SIGNAL_RECEIVED`: the signal consumed at `position`, taken from the inbox. */
export interface SignalReceivedPayload {
  position: number;
  name: string;
  signalId: string;
  payload: unknown;
}

/**
 * Payload of `UPDATE_APPLIED`: the update `updateId` taken from the inbox and handed to the
 * body's `ctx.onUpdate(name)` handler at `position`, with what the handler returned (`result`)
 * or threw (`error`). Replay hands the same payload to the handler at the same position.
 */
export interface UpdateAppliedPayload {
  position: number;
  name: string;
  updateId: string;
  payload: unknown;
  result?: unknown;
  error?: unknown;
}

/** Payload of `CHILD_STARTED`: recorded once the child's seq 0 is durable. */
export interface ChildStartedPayload {
  position: number;
  /** Workflow name of the child (the call's name). */
  name: string;
  childId: string;
  version: number;
}

/** Payload of `CHILD_SETTLED`: the child's terminal state, as the parent observed it. */
export interface ChildSettledPayload {
  position: number;
  childId: string;
  status: ExecutionStatus;
  output?: unknown;
  error?: unknown;
}

/** Payload of `CANCEL_REQUESTED`. */
export interface CancelRequestedPayload {
  reason: string;
  /** The fence the cancellation took the execution over with. */
  fence: number;
  /** Set when the execution's deadline requested it: the deadline (ms since the epoch). */
  deadline?: number;
}

/**
 * Payload of `EXECUTION_REDRIVEN`: an operator's `runtime.resume` of a failed or dead-lettered
 * execution under a new fence (adr/0067). `reopened` are the positions of the failed steps that
 * run again, each with a fresh retry budget; every other recorded call keeps its outcome.
 */
export interface RedrivenPayload {
  reason: string;
  fence: number;
  /** The status it was resumed from. */
  from: 'failed' | 'dead_lettered';
  reopened: { position: number; name: string }[];
}

/** Payload of `EXECUTION_COMPLETED`. */
export interface CompletedPayload {
  output: unknown;
}

/** Payload of `EXECUTION_FAILED`, `EXECUTION_CANCELLED` and `EXECUTION_DEAD_LETTERED`. */
export interface EndedPayload {
  error: unknown;
  reason?: string;
}

/**
 * The payload of each event type: what the log records for it. A log writer records exactly
 * this shape for its type, so a reader that has checked `type` reads the payload as this type.
 * Its keys are {@link EventTypes} (test/typed-events.test.ts checks it).
 */
export interface EventPayloads {
  EXECUTION_STARTED: StartedPayload;
  EXECUTION_RECOVERED: TakeoverPayload;
  STEP_STARTED: StepStartedPayload;
  STEP_COMPLETED: StepCompletedPayload;
  STEP_FAILED: StepFailedPayload;
  TIMER_SCHEDULED: TimerScheduledPayload;
  TIMER_FIRED: TimerFiredPayload;
  SIGNAL_RECEIVED: SignalReceivedPayload;
  CHILD_STARTED: ChildStartedPayload;
  CHILD_SETTLED: ChildSettledPayload;
  UPDATE_APPLIED: UpdateAppliedPayload;
  EXECUTION_SUSPENDED: SuspendedPayload;
  EXECUTION_RESUMED: TakeoverPayload;
  CANCEL_REQUESTED: CancelRequestedPayload;
  EXECUTION_COMPLETED: CompletedPayload;
  EXECUTION_FAILED: EndedPayload;
  EXECUTION_CANCELLED: EndedPayload;
  EXECUTION_DEAD_LETTERED: EndedPayload;
  EXECUTION_CONTINUED: ContinuedPayload;
  EXECUTION_REDRIVEN: RedrivenPayload;
}

/** The payload of an event of type `T` (a union over the types of `T`). */
export type PayloadOf<T extends EventType> = EventPayloads[T];
