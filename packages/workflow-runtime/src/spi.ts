/**
 * The store SPIs. Implementations live elsewhere (in-memory in this package, SQLite and
 * PostgreSQL in their own packages) and prove themselves with `@skein/conformance`.
 */

import type { EventType, ExecutionStatus, StoredEvent } from './events.js';
import type { FanOutStore } from './fan-out-store.js';
import type { OutboxMessage, OutboxStore } from './outbox.js';
import type { QueueStore } from './queues/queue-spi.js';
import type { ScheduleStore } from './schedules/schedule-spi.js';

/** One event to append; the payload is already encoded by the codec. */
export interface EventDraft {
  envelopeId: string;
  type: EventType;
  payload: string;
  /** Milliseconds since the epoch. */
  recordedAt: number;
}

/**
 * A batch of events for one execution, written atomically at `expectedSeq`,
 * `expectedSeq + 1`, … under the writer's `fence`.
 */
export interface AppendRequest {
  executionId: string;
  /** Name of the workflow; stores index it when seq 0 is written. */
  workflow: string;
  /** Sequence number of the first event in `events`. */
  expectedSeq: number;
  fence: number;
  events: readonly EventDraft[];
  /**
   * Messages for the store's outbox, written in the same transaction as the events, or not at
   * all when the append is refused (O1). Only a store with an outbox (`Stores.outbox`) accepts
   * them; one without refuses the append with `InvalidAppendError` (default: none).
   */
  outbox?: readonly OutboxMessage[];
}

/** Outcome of a successful append. */
export interface AppendResult {
  /** Sequence number of the last event written. */
  lastSeq: number;
  /** Status of the execution after the append. */
  status: ExecutionStatus;
}

/** A row of the execution index. */
export interface ExecutionSummary {
  executionId: string;
  workflow: string;
  status: ExecutionStatus;
  /** Last sequence number written. */
  sequence: number;
  /** Milliseconds since the epoch of the newest event. */
  updatedAt: number;
}

/** A pending execution taken over by {@link EventStore.takeOverPending}: its new fence and its log. */
export interface PendingTakeover {
  executionId: string;
  /** A fence strictly larger than any returned before for the execution, as `acquireFence` returns. */
  fence: number;
  /** Its whole log in seq order, as `read` returns it. */
  events: StoredEvent[];
}

/** Filter and paging for {@link EventStore.listExecutions}. */
export interface ListExecutionsQuery {
  /** Only executions in one of these statuses (default: all). */
  status?: readonly ExecutionStatus[];
  /** Only executions of this workflow (default: all). */
  workflow?: string;
  /** Page size, an integer >= 1 (default: 100); a store refuses 0 or less with `InvalidInputError`. */
  limit?: number;
  /** Opaque cursor from the previous page's `nextCursor`. */
  cursor?: string;
}

/** One page of executions, ordered by execution id. */
export interface ExecutionPage {
  items: ExecutionSummary[];
  /** Pass as `cursor` for the next page; absent on the last page. */
  nextCursor?: string;
}

/**
 * The append-only event log (L1–L4, L6).
 *
 * `append` checks the fence and the sequence and writes in one atomic step; on failure it
 * writes nothing and rejects with `StaleFenceError` (a fence older than the newest granted),
 * `FenceNotGrantedError` (one newer, which `acquireFence` never returned; fence 0 is every
 * execution's first, granted without a call), `ExecutionAlreadyExistsError` (seq 0 taken),
 * `DuplicateSequenceError`, `SequenceGapError`, `DuplicateEnvelopeIdError`,
 * `ExecutionTerminatedError` (L6) or `StorageWriteError`. A store may group the appends of
 * many executions into one transaction, but each caller gets its own outcome (L4).
 */
export interface EventStore {
  /** Append a batch of events for one execution. */
  append(request: AppendRequest): Promise<AppendResult>;
  /** Events of one execution from `fromSeq` (default 0) in seq order, at most `limit`. */
  read(executionId: string, fromSeq?: number, limit?: number): Promise<StoredEvent[]>;
  /** A fence strictly larger than any returned before for this execution (also before seq 0). */
  acquireFence(executionId: string): Promise<number>;
  /** The newest fence of the execution, 0 when none was ever taken. */
  currentFence(executionId: string): Promise<number>;
  /** The index row of one execution, or null when seq 0 does not exist. */
  getExecution(executionId: string): Promise<ExecutionSummary | null>;
  /** Executions ordered by id, filtered and paged. */
  listExecutions(query?: ListExecutionsQuery): Promise<ExecutionPage>;
  /**
   * Optional: for each of `executionIds` whose status is `pending`, `acquireFence` and `read`
   * of its log, in one round trip; the status check and the fence are one atomic step per
   * execution. One not pending (running, ended, missing) is left as it is, its fence too, and
   * is not in the result; each id appears once (any order). A writer that appended under an
   * older fence is fenced out from then on; the log is what was committed when the call began,
   * and an append that misses a later event is refused at its seq. A caller without it
   * acquires and reads one execution at a time.
   */
  takeOverPending?(executionIds: readonly string[]): Promise<PendingTakeover[]>;
}

/** A cached fold of an execution's log up to `seq` (L5: a cache, never the truth). */
export interface Snapshot {
  executionId: string;
  seq: number;
  /** The codec's encoding of the folded state. */
  state: string;
}

/** Snapshots of folded state. Deleting every snapshot must change no result (L5). */
export interface SnapshotStore {
  /** Save a snapshot; an older one for the same execution may be replaced. */
  put(snapshot: Snapshot): Promise<void>;
  /** The newest snapshot of the execution, or null. */
  latest(executionId: string): Promise<Snapshot | null>;
  /** Delete every snapshot of the execution. */
  delete(executionId: string): Promise<void>;
}

/** A durable timer: wake `executionId` at `dueAt`. */
export interface Timer {
  timerId: string;
  executionId: string;
  /** Milliseconds since the epoch. */
  dueAt: number;
}

/** Options of {@link TimerStore.claimDue}. */
export interface ClaimTimersOptions {
  /** Claim timers with `dueAt <= now`. */
  now: number;
  /** At most this many. */
  limit: number;
  /** Who claims them. */
  owner: string;
  /** The claim lapses after this long unless the timer is completed (a crashed claimer). */
  claimTtlMs: number;
  /**
   * Only timers of executions of these workflows, by name, so a runtime claims only what it
   * can run and leaves the rest due for a runtime that registers them; an empty list claims
   * none, and a timer whose execution has no seq 0 matches no list (default: every timer).
   */
  workflows?: readonly string[];
}

/** Durable timers (sleeps, step retries). A due timer is claimed by exactly one claimer. */
export interface TimerStore {
  /** Schedule a timer; scheduling the same `timerId` again is a no-op. */
  schedule(timer: Timer): Promise<void>;
  /** Claim due timers, oldest due first; a claimed timer is not returned again until its claim lapses. */
  claimDue(options: ClaimTimersOptions): Promise<Timer[]>;
  /** Claim one timer by id if it is due and unclaimed; true when this caller got it. */
  claim(timerId: string, options: Omit<ClaimTimersOptions, 'limit' | 'workflows'>): Promise<boolean>;
  /** Delete a timer (it fired). */
  complete(timerId: string): Promise<void>;
  /** Timers of one execution. */
  forExecution(executionId: string): Promise<Timer[]>;
  /** The earliest due time of any unclaimed timer, or null. */
  nextDueAt(): Promise<number | null>;
}

/** Who owns an execution until when. */
export interface Lease {
  key: string;
  owner: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

/**
 * Leases: ownership with expiry. Used per running execution and for the supervisor's leader
 * lease. Time comes from the caller (`now`), so tests inject a clock.
 */
export interface LeaseStore {
  /** Take the lease if it is free or expired (or already ours); returns it, or null when another owner holds it. */
  claim(key: string, owner: string, ttlMs: number, now: number): Promise<Lease | null>;
  /** Extend our lease; null when we no longer hold it (expired and taken, or released). */
  renew(key: string, owner: string, ttlMs: number, now: number): Promise<Lease | null>;
  /** Give the lease up; false when we did not hold it. */
  release(key: string, owner: string): Promise<boolean>;
  /** The lease on `key`, expired or not, or null. */
  get(key: string): Promise<Lease | null>;
  /** Leases whose `expiresAt <= now`, at most `limit`. */
  listExpired(now: number, limit: number): Promise<Lease[]>;
  /**
   * Optional: `claim` of each of `keys` in one round trip; returns the keys now held by `owner`
   * (any order). A caller without it claims one key at a time.
   */
  claimMany?(keys: readonly string[], owner: string, ttlMs: number, now: number): Promise<string[]>;
  /**
   * Optional: `release` of each of `keys` in one round trip; returns the keys that `owner` held
   * and gave up (any order). A caller without it releases one key at a time.
   */
  releaseMany?(keys: readonly string[], owner: string): Promise<string[]>;
}

/** A signal waiting in an execution's inbox for the `ctx.waitForSignal` that consumes it. */
export interface Signal {
  /**
   * Id of the signal within its execution (a ULID unless the sender chose one). Ids are scoped
   * to the execution: the same id sent to two executions is two signals; sent to one execution
   * again, it is a duplicate and the first send stands.
   */
  signalId: string;
  executionId: string;
  name: string;
  /** The codec's encoding of the payload. */
  payload: string;
  /** Milliseconds since the epoch. */
  sentAt: number;
}

/** Options of {@link SignalStore.send}. */
export interface SendSignalOptions {
  /**
   * Refuse the signal (`'inbox-full'`, nothing written) when the execution already has this
   * many signals waiting, an integer >= 1 (default: `DEFAULT_MAX_PENDING_SIGNALS`, 10 000).
   * The count and the insert are one atomic step, so concurrent senders never pass the bound.
   */
  maxPending?: number;
}

/**
 * What {@link SignalStore.send} did: `'sent'` (stored now), `'duplicate'` (this execution
 * already has a signal with this id, waiting or completed; nothing changed) or
 * `'inbox-full'` (the execution has `maxPending` signals waiting; nothing was written).
 */
export type SignalSendOutcome = 'sent' | 'duplicate' | 'inbox-full';

/** Which waiting signals {@link SignalStore.pending} returns. */
export interface PendingSignalsQuery {
  /** Only signals of these names (default: every name); an empty list matches none. */
  names?: readonly string[];
  /**
   * Only signals sent after this one (a `signalId` of the same execution, waiting or
   * completed), to page on; an id the execution does not have gives no signals (default: from
   * the oldest).
   */
  after?: string;
  /** At most this many, an integer >= 1 (default: `DEFAULT_PENDING_LIMIT`, 100). */
  limit?: number;
}

/**
 * The signal inbox: accepted signals wait here, outside the log, until a run consumes them
 * (it records `SIGNAL_RECEIVED` in the log, then completes the row). Sending needs no fence,
 * so a signal never fences out the execution's holder.
 *
 * Everything is keyed by execution: a signal id is unique within its execution only. A
 * completed signal's id stays taken (a resend is a duplicate) until `clear`. Send order is the
 * order in which sends to one execution took effect, so a page read `after` a signal never
 * misses one sent before it.
 */
export interface SignalStore {
  /** Keep a signal unless its id is taken in its execution or the inbox is full; says which. */
  send(signal: Signal, options?: SendSignalOptions): Promise<SignalSendOutcome>;
  /**
   * Signals of one execution still waiting (not completed), oldest (first sent) first,
   * filtered and bounded by `query`. Reads only what it returns: the cost is in the page, not
   * in the size of the inbox.
   */
  pending(executionId: string, query?: PendingSignalsQuery): Promise<Signal[]>;
  /**
   * Mark one signal of an execution consumed: it leaves `pending` and the inbox bound, its
   * payload is dropped, and its id stays taken. Unknown ids are ignored.
   */
  complete(executionId: string, signalId: string): Promise<void>;
  /** Delete every signal of an execution, waiting or completed (it ended). */
  clear(executionId: string): Promise<void>;
}

/**
 * Why an execution's log could not be continued: a run of it failed with an error that every
 * run of the same log meets again (a `NonDeterminismError` after a deploy), recorded by the
 * runtime whose run failed (adr/0058). It stands only while the log still ends at `seq`: any
 * event written since (a fixed deploy's run, a cancellation, a dead letter) makes it void.
 */
export interface Blockage {
  executionId: string;
  /** The log's last seq when the run failed. */
  seq: number;
  /** Stable code of the error (`NON_DETERMINISM`). */
  code: string;
  /** The error's message (at most `MAX_BLOCKAGE_MESSAGE` characters). */
  message: string;
  /** When a run first failed at this seq, in ms since the epoch. */
  since: number;
  /** Runs that failed at this seq, an integer >= 1. */
  attempts: number;
  /** When the latest of them failed, in ms since the epoch. */
  lastAt: number;
}

/** A failed run, as {@link BlockageStore.record} takes it. */
export interface BlockageFailure {
  executionId: string;
  seq: number;
  code: string;
  message: string;
  /** When the run failed, in ms since the epoch. */
  at: number;
}

/**
 * Blockages, one row per execution (adr/0058). `record` is one atomic step: at the seq of the
 * row it counts one more attempt and keeps `since`; at another seq (or with no row) it starts
 * over with `attempts: 1`. Rows are kept as recorded: whether one still stands is the reader's
 * check against the log (`blockageStands`).
 */
export interface BlockageStore {
  /** Record a failed run and return the row as stored. */
  record(failure: BlockageFailure): Promise<Blockage>;
  /** The row of one execution, standing or not, or null. */
  get(executionId: string): Promise<Blockage | null>;
  /** Rows ordered by execution id, after `after` (default: from the first), at most `limit` (an integer >= 1). */
  list(query: { after?: string; limit: number }): Promise<Blockage[]>;
  /** Delete the row of one execution (none: nothing happens). */
  clear(executionId: string): Promise<void>;
}

/** The stores one runtime works on. */
export interface Stores {
  events: EventStore;
  snapshots: SnapshotStore;
  timers: TimerStore;
  leases: LeaseStore;
  /** The signal inbox (`runtime.signal` writes it, `ctx.waitForSignal` consumes it). */
  signals: SignalStore;
  /** Queue items and slots, for `defineQueue` (docs/queues.md; default: none, and queues are refused). */
  queues?: QueueStore;
  /** Schedule state, for `defineSchedule` (docs/schedules.md; default: none, and schedules are refused). */
  schedules?: ScheduleStore;
  /**
   * The outbox (docs/outbox.md): messages written with the appends that cause them, relayed
   * by an `OutboxPublisher` or read by a `StoreTransport` (default: none; every store of this
   * repository has one).
   */
  outbox?: OutboxStore;
  /**
   * Blockages (adr/0058): why an execution could not be continued, for `loadState(id).blocked`,
   * `list({ blocked: true })` and the back-off of maintenance and supervisors (default: none,
   * and nothing is recorded; every store of this repository has one).
   */
  blockages?: BlockageStore;
  /**
   * The fan-out tables (docs/fan-out.md): fan-outs, placements, chunks and items, for
   * `ctx.fanOut` (default: none, and fan-outs are refused; every store of this repository has them).
   */
  fanOuts?: FanOutStore;
  /**
   * Optional: register `hook` as work `close()` does first, before it releases anything; returns
   * the function that unregisters it. A runtime registers the stop of its in-process maintenance
   * here, so closing the stores before the runtime never leaves a pass on a closed connection
   * (every store of this repository has it; `CloseHooks` implements it).
   */
  beforeClose?(hook: () => Promise<void>): () => void;
  /** Release connections and files. */
  close(): void | Promise<void>;
}
