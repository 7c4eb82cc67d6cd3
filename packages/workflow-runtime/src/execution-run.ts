/**
 * One attempt at running an execution: the workflow context and the driver around the body.
 * Context calls are matched to the log by position (replay); a call the log has already
 * settled returns its recorded value, and a new call records before the workflow moves on.
 * Step attempts are in `step-attempt.ts`, waiting and suspending in `suspension.ts`, signals
 * and children in `signal-wait.ts` and `child-call.ts`.
 */

import { cancellationAt } from './cancellation.js';
import { beginChild } from './child-call.js';
import { type ChildHandle, childHandleOf } from './child-handle.js';
import { encode } from './codec.js';
import { ConsumedIndex } from './consumed-index.js';
import type {
  ChildOptions,
  HistorySize,
  StepFunction,
  StepOptions,
  WaitForSignalOptions,
  WorkflowContext,
  WorkflowStream,
} from './context-api.js';
import { type ContinueRequest, endContinued, requestContinue } from './continue-as-new.js';
import { cancelledErrorOf } from './deadlines.js';
import { Deliveries } from './deliveries.js';
import type { DestinationShares } from './destination-shares.js';
import { durationMs, instantSchema } from './durations.js';
import { NonDeterminismError, PayloadTooLargeError } from './errors.js';
import type { CallKind } from './events.js';
import { type FanOutCallDeps, type FanOutCallOptions, fanOutCall } from './fan-out-call.js';
import type { FanOutSummary } from './fan-out-settlement.js';
import type { CallRecord, ExecutionState } from './fold.js';
import { isWorkflowDefinition } from './handles.js';
import { HistoryCounter, historySize } from './history-size.js';
import { assertCallName, assertName, newId } from './ids.js';
import type { LogWriter } from './log-writer.js';
import { publishEvent, streamOf, writeStream } from './publish-calls.js';
import type { Awaiting, RunFeatures, RunInternals } from './run-internals.js';
import { cancelChildCall, type SentSignal, signalCall } from './signal-call.js';
import { waitForSignal } from './signal-wait.js';
import type { Timer } from './spi.js';
import type { StepAbort } from './step-abort.js';
import { recordFailure, runStep, type StepRun } from './step-attempt.js';
import { suspend, type Wait, waitOf } from './suspension.js';
import type { TaskDefinition } from './task.js';
import { UpdateHandlers } from './update-apply.js';
import { type AnyWorkflow, parseWith, type WorkflowDefinition } from './workflow.js';

/** How the body settled: its return value, or what it threw. */
type Settled = { ok: true; value: unknown } | { ok: false; error: unknown };

/** What a blocked call is rejected with when a resident run resumes: make the call again. */
const REDO = Symbol('redo');

/** How a run ended: at a terminal state, or suspended until `wakeAt` (and what else it waits for). */
export type RunOutcome =
  | { kind: 'terminal'; state: ExecutionState }
  | {
      kind: 'suspended';
      state: ExecutionState;
      wakeAt: number | undefined;
      awaiting?: { signals: string[]; children: string[] };
    };

/** What a run needs from its runtime. */
export interface RunHost {
  clock(): number;
  /** Make durable timers exist before the execution suspends on them. */
  scheduleTimers(timers: Timer[]): Promise<void>;
  /** Signals, children and cancellation of children (without it those context calls throw). */
  features?: RunFeatures;
  /** The shares of steps that declared a destination (without it, such a step has no share). */
  destinations?: DestinationShares;
  /** The fan-out stores (without them `ctx.fanOut` refuses). */
  fanOut?: FanOutCallDeps;
}

/** Runs a workflow body once against its log; see the module comment. */
export class ExecutionRun implements WorkflowContext {
  readonly executionId: string;
  readonly version: number;
  private cursor = 0;
  private inFlight = 0;
  private readonly waits: Wait[] = [];
  /** True once this run threw `CancelledError` at a call at or past the cancel boundary. */
  private cancelDelivered = false;
  private suspendCheck = false;
  /** Ends the current stretch of the run: the body settled, or every branch waits. */
  private endStretch!: (how: Settled | 'suspend' | 'continue') => void;
  private stretch = this.newStretch();
  private fatal: unknown = undefined;
  private ended = false;
  /** Set by the first `ctx.continueAsNew`: the run ends on it (adr/0063). */
  private continuing: ContinueRequest | undefined;
  private history: HistoryCounter | undefined;
  /** True once `run` started the body. */
  private started = false;
  /** How the body settled, once it did (a resident run's body stays pending). */
  private settled: Settled | undefined;
  /** True when the body used its context while the run was suspended (code that is not deterministic). */
  private strayed = false;
  /** Position a call made again after a resume takes instead of the next one (resident-bodies.ts). */
  private redoAt: number | undefined;
  /** Wake each blocked call of this run so it is made again at its position (a resident resume). */
  private readonly blocked: (() => void)[] = [];
  /** The signal ids the log consumed, looked up without a scan (consumed-index.ts); made at the first lookup. */
  private consumed: ConsumedIndex | undefined;
  /** True from the moment this stretch ends in a suspension until the run resumes. */
  private suspendingNow = false;
  /** Timers this run saw fire; the runtime deletes their rows once the run is durable. */
  firedTimers: string[] = [];
  /** Signals this run consumed; the runtime deletes them from the inbox once the run is durable. */
  consumedSignals: string[] = [];
  /** Hands outcomes to the body in log order (adr/0031). */
  private readonly deliveries: Deliveries;
  /** The aborts of the step functions running now (their `StepInfo.signal`). */
  private readonly running = new Set<StepAbort>();
  /** The run as its step calls see it (step-attempt.ts). */
  private readonly steps: { -readonly [K in keyof StepRun]: StepRun[K] };
  /** The body's update handlers (update-apply.ts, adr/0049); made at the first use. */
  private updateHandlers: UpdateHandlers | undefined;
  /** The run as the signal and child calls see it; made at the first such call. */
  private internalsView: RunInternals | undefined;

  constructor(
    private readonly host: RunHost,
    private readonly workflow: AnyWorkflow,
    private writer: LogWriter,
  ) {
    const state = this.state;
    this.executionId = state.executionId;
    this.version = state.version;
    this.deliveries = new Deliveries(state, () => this.scheduleSuspendCheck());
    // A data property, not a getter: an object literal with an accessor is built on V8's slow
    // path, once per run. `resume` points it at the new writer.
    this.steps = {
      executionId: this.executionId,
      writer,
      clock: () => this.host.clock(),
      running: this.running,
      destinations: this.host.destinations,
      next: (kind, name) => this.next(kind, name),
      block: (wakeAt, timerId) => this.block(wakeAt, timerId),
      fireTimer: (timerId, position) => this.fireTimer(timerId, position),
      enterFlight: () => {
        this.inFlight += 1;
      },
      leaveFlight: () => this.leaveFlight(),
      assertUsable: () => this.assertUsable(),
    };
  }

  private get state(): ExecutionState {
    return this.writer.state!;
  }

  /** Drive the body to a terminal state or a suspension. Rejects when the log cannot be written. */
  async run(): Promise<RunOutcome> {
    this.started = true;
    (async () => this.workflow.run(this, this.state.input))().then(
      (value: unknown) => this.bodySettled({ ok: true, value }),
      (error: unknown) => this.bodySettled({ ok: false, error }),
    );
    return this.drive();
  }

  private bodySettled(settled: Settled): void {
    this.settled = settled;
    this.endStretch(settled);
  }

  /** The definition this run's body belongs to. */
  get definition(): AnyWorkflow {
    return this.workflow;
  }

  /**
   * True when this run suspended cleanly and can go on in memory (resident-bodies.ts): no
   * fatal error, its log writable, nothing in flight or waiting to be handed over.
   */
  get resumable(): boolean {
    return (
      this.started &&
      this.settled === undefined &&
      this.continuing === undefined &&
      !this.strayed &&
      this.fatal === undefined &&
      this.writer.failed === undefined &&
      this.inFlight === 0 &&
      this.blocked.length > 0 &&
      this.deliveries.idle &&
      this.updateHandlers?.inHandler !== true
    );
  }

  /**
   * True once every branch of the body waits and the run is writing its suspension (or wrote
   * it), until it resumes: what is left of the stretch is that one write (resident-bodies.ts).
   */
  get suspending(): boolean {
    return this.suspendingNow;
  }

  /**
   * Go on with a run that suspended, instead of replaying it (adr/0068): `writer` continues
   * the log right where this run left it. Every blocked call is made again at its position,
   * so it sees what arrived (a signal, a settled child, a due timer) as a replay would.
   */
  async resume(writer: LogWriter): Promise<RunOutcome> {
    this.writer = writer;
    this.steps.writer = writer;
    this.suspendingNow = false;
    this.firedTimers = [];
    this.consumedSignals = [];
    this.ended = false;
    this.stretch = this.newStretch();
    this.deliveries.restart();
    this.updateHandlers?.resumed();
    const wakes = this.blocked.splice(0);
    this.waits.length = 0;
    for (const wake of wakes) wake();
    return this.drive();
  }

  private newStretch(): Promise<Settled | 'suspend' | 'continue'> {
    return new Promise((resolve) => {
      this.endStretch = resolve;
    });
  }

  private resolveSuspend(): void {
    this.endStretch('suspend');
  }

  /** Race the body against this stretch's suspension, then record how it ended. */
  private async drive(): Promise<RunOutcome> {
    const settled = await this.stretch;
    // From here on, a branch still in flight (a race's loser) records nothing and is handed nothing.
    this.ended = true;
    this.deliveries.stop();
    try {
      this.throwIfAborted();
      if (settled === 'suspend') {
        this.suspendingNow = true;
        return await suspend(this.host, this.writer, this.suspendedOn());
      }
      const cancel = this.state.cancel;
      // Cancellation ends the execution cancelled whatever the body did with CancelledError.
      if (cancel !== undefined) {
        const error = cancelledErrorOf(this.executionId, cancel);
        return await this.end('EXECUTION_CANCELLED', { error, reason: cancel.reason });
      }
      if (settled === 'continue')
        return await endContinued(this.internals(), this.continuing!, (error) => this.fail(error));
      if (!settled.ok) return await this.fail(settled.error);
      this.checkReachedEnd();
      return await this.complete(settled.value);
    } finally {
      this.ended = true;
    }
  }

  step<T>(name: string, fn: StepFunction<T>, options: StepOptions = {}): Promise<T> {
    return this.ordered(
      this.cursor,
      this.redoable(() => runStep<T>(this.steps, name, fn, options)),
    );
  }

  sleep(name: string, ms: number): Promise<void> {
    const delay = durationMs(ms, `ctx.sleep("${name}")`, 'ms');
    return this.ordered(
      this.cursor,
      this.redoable(() => this.sleepAt(name, () => this.host.clock() + delay)),
    );
  }

  sleepUntil(name: string, until: Date | number): Promise<void> {
    const at = parseWith(instantSchema, until, `ctx.sleepUntil("${name}")`, 'until');
    return this.ordered(
      this.cursor,
      this.redoable(() => this.sleepAt(name, () => at)),
    );
  }

  now(): Date {
    return new Date(this.recorded('now', () => new Date(this.host.clock())) as Date);
  }

  random(): number {
    return this.recorded('random', Math.random) as number;
  }

  uuid(): string {
    return this.recorded('uuid', () => globalThis.crypto.randomUUID()) as string;
  }

  waitForSignal<T = unknown>(
    name: string,
    options: WaitForSignalOptions<T> & { timeoutMs: number },
  ): Promise<T | undefined>;
  waitForSignal<T = unknown>(name: string, options?: WaitForSignalOptions<T>): Promise<T>;
  waitForSignal<T = unknown>(name: string, options: WaitForSignalOptions<T> = {}): Promise<T | undefined> {
    return this.ordered(
      this.cursor,
      this.redoable(() => waitForSignal(this.internals(), name, options)),
    );
  }

  child<In, Out, Raw>(
    workflow: WorkflowDefinition<In, Out, Raw>,
    input: Raw,
    options: ChildOptions = {},
  ): ChildHandle<Out> {
    const position = this.cursor;
    const call = beginChild(this.internals(), workflow, input, options);
    // A resident resume makes the wait for the child's end again at its position (adr/0068).
    const outcome = this.redoneAt(
      position,
      call.outcome,
      () => beginChild(this.internals(), workflow, input, options).outcome,
    );
    return childHandleOf(call, this.ordered(position, outcome as Promise<Out>), {
      signal: (childId, name, payload, after) =>
        this.ordered(this.cursor, signalCall(this.internals(), childId, name, payload, after)),
      cancel: (childId, reason, after) =>
        this.ordered(this.cursor, cancelChildCall(this.internals(), childId, reason, after)),
    });
  }

  signal(...args: unknown[]): Promise<SentSignal> {
    // Given the workflow first, the compiler checked the name and payload; the receiver checks them again.
    const [targetId, name, payload] = isWorkflowDefinition(args[0]) ? args.slice(1) : args;
    return this.ordered(
      this.cursor,
      signalCall(this.internals(), targetId as string, name as string, payload),
    );
  }

  fanOut<In, Out, Raw, A = undefined>(
    name: string,
    task: TaskDefinition<In, Out, Raw>,
    options: FanOutCallOptions<Out, A>,
  ): Promise<FanOutSummary<A>> {
    const deps = this.host.fanOut ?? {
      home: undefined,
      shards: {},
      owner: this.executionId,
      clock: () => this.host.clock(),
    };
    // Its steps and sleeps are ordinary context calls, recorded and replayed by position.
    return fanOutCall(this, deps, name, task, options);
  }

  setEvent(key: string, value: unknown): Promise<void> {
    return this.ordered(this.cursor, publishEvent(this.internals(), key, value));
  }

  stream(name: string): WorkflowStream {
    return streamOf(name, (value) => this.ordered(this.cursor, writeStream(this.internals(), name, value)));
  }

  continueAsNew(input: unknown): Promise<never> {
    try {
      this.continuing ??= requestContinue(this.internals(), input);
    } catch (error) {
      return Promise.reject(error);
    }
    this.endStretch('continue');
    // The run ends on the continue; the body waits here until it is dropped.
    return new Promise<never>(() => {});
  }

  historySize(): Promise<HistorySize> {
    const events = this.host.features?.continuation.events;
    if (events !== undefined) this.history ??= new HistoryCounter(events, this.executionId);
    const counter = this.history;
    if (counter === undefined)
      return Promise.reject(new Error(`execution "${this.executionId}": ctx.historySize needs a runtime`));
    return this.ordered(this.cursor, historySize(this.internals(), counter));
  }

  onUpdate<T = unknown, R = unknown>(name: string, handler: (payload: T) => R): void {
    this.assertUsable();
    this.updates.register(name, handler);
  }

  /**
   * The outcome of the call at `position`, handed to the body in the order of the event that
   * settled it (adr/0031); one that settled nothing (a refusal, a cancellation) at once.
   */
  private ordered<T>(position: number, outcome: Promise<T>): Promise<T> {
    return this.deliveries.order(outcome, () => this.state.calls[position]?.settledSeq);
  }

  /**
   * A call that may block, made by `make`: when a resident resume wakes it (`REDO`), it is
   * made again at the same position, as a replay would make it (adr/0068).
   */
  private redoable<T>(make: () => Promise<T>): Promise<T> {
    const position = this.cursor;
    return this.redoneAt(position, make(), make);
  }

  /** `first`, the call made at `position`; made again there by `make` each time a resident resume rejects it. */
  private redoneAt<T>(position: number, first: Promise<T>, make: () => Promise<T>): Promise<T> {
    const again = (error: unknown): Promise<T> => {
      if (error !== REDO) throw error;
      this.redoAt = position;
      let made: Promise<T>;
      try {
        made = make();
      } finally {
        this.redoAt = undefined;
      }
      return made.catch(again);
    };
    return first.catch(again);
  }

  /** The body's update handlers, made at the first use. */
  private get updates(): UpdateHandlers {
    this.updateHandlers ??= new UpdateHandlers(this.internals());
    return this.updateHandlers;
  }

  /** The run as the signal and child calls see it (they live in their own files). */
  private internals(): RunInternals {
    if (this.internalsView !== undefined) return this.internalsView;
    const run = this;
    this.internalsView = {
      executionId: this.executionId,
      workflow: this.workflow,
      get writer() {
        return run.writer;
      },
      host: this.host,
      get consumedSignals() {
        return run.consumedSignals;
      },
      state: () => this.state,
      isConsumed: (signalId) => {
        this.consumed ??= new ConsumedIndex();
        return this.consumed.has(this.state.consumedSignals, signalId);
      },
      next: (kind, name) => this.next(kind, name),
      peek: () => this.state.calls[this.redoAt ?? this.cursor],
      block: (wakeAt, timerId, awaiting) => this.block(wakeAt, timerId, awaiting),
      track: (work) => this.track(work),
      fireTimer: (timerId, position) => this.fireTimer(timerId, position),
      discardTimer: (timerId) => this.firedTimers.push(timerId),
    };
    return this.internalsView;
  }

  /** Count `work` as in flight (the run does not suspend meanwhile); check the run is usable after. */
  private async track<T>(work: () => Promise<T>): Promise<T> {
    this.inFlight += 1;
    try {
      return await work();
    } finally {
      this.leaveFlight();
      this.assertUsable();
    }
  }

  /** One piece of work less in flight; with none left, the run may suspend if every branch waits. */
  private leaveFlight(): void {
    this.inFlight -= 1;
    if (this.inFlight === 0 && this.waits.length > 0) this.scheduleSuspendCheck();
  }

  patched(id: string): boolean {
    this.assertUsable();
    assertName(id, 'ctx.patched call', 'id');
    if (this.state.patches.includes(id)) return true;
    // Calls recorded beyond this point were made by code that passed here without the patch.
    if (this.cursor < this.state.calls.length) return false;
    this.writer.record(
      'STEP_COMPLETED',
      { position: -1, name: id, kind: 'patch', output: true },
      `patch "${id}"`,
    );
    return true;
  }

  /**
   * Abort the signal of every step function running in this run (`runtime.cancel` in this
   * process). Only the function sees it: what is recorded is decided by the log, as for any
   * failure (a run that was taken over records nothing more).
   */
  abortSteps(reason: unknown): void {
    for (const controller of this.running) controller.abort(reason);
  }

  private sleepAt(name: string, dueAt: () => number): Promise<void> {
    const { position, record } = this.next('sleep', name);
    if (record?.status === 'fired') return Promise.resolve();
    if (record === undefined) {
      const at = dueAt();
      const timerId = newId();
      this.writer.record(
        'TIMER_SCHEDULED',
        { position, name, timerId, dueAt: at, purpose: 'sleep' },
        `sleep "${name}"`,
      );
      return at > this.host.clock() ? this.block(at, timerId) : this.afterFire(timerId, position);
    }
    const at = record.wakeAt ?? 0;
    return at > this.host.clock() ? this.block(at, record.timerId) : this.afterFire(record.timerId, position);
  }

  private afterFire(timerId: string | undefined, position: number): Promise<void> {
    this.fireTimer(timerId, position);
    return Promise.resolve();
  }

  private fireTimer(timerId: string | undefined, position: number): void {
    if (timerId === undefined) return;
    this.writer.record('TIMER_FIRED', { timerId, position }, 'timer');
    this.firedTimers.push(timerId);
  }

  private recorded(kind: CallKind, make: () => unknown): unknown {
    const { position, record } = this.next(kind, kind);
    if (record?.status === 'completed') return record.output;
    const value = make();
    this.writer.record('STEP_COMPLETED', { position, name: kind, kind, output: value }, `ctx.${kind}()`);
    return value;
  }

  /** Take the next position; throw NonDeterminismError when the log holds another call there. */
  private next(kind: CallKind, name: string): { position: number; record: CallRecord | undefined } {
    this.assertUsable();
    if (this.updateHandlers?.inHandler === true)
      throw new Error(
        `execution "${this.executionId}": ctx.${kind} called in an update handler; handlers make no context calls`,
      );
    assertCallName(kind, name);
    const position = this.redoAt ?? this.cursor++;
    this.redoAt = undefined;
    const record = this.state.calls[position];
    if (record !== undefined && (record.kind !== kind || record.name !== name)) {
      this.fatal = new NonDeterminismError(this.executionId, position, record, { kind, name });
      throw this.fatal;
    }
    const cancel = this.state.cancel;
    if (cancel !== undefined) {
      const cancelled = cancellationAt(cancel, kind, position, record, this.cancelDelivered);
      if (cancelled) {
        this.cancelDelivered = true;
        throw cancelledErrorOf(this.executionId, cancel);
      }
    }
    return { position, record };
  }

  private block(
    wakeAt: number | undefined,
    timerId: string | undefined,
    awaiting?: Awaiting,
  ): Promise<never> {
    this.waits.push(waitOf(this.executionId, wakeAt, timerId, awaiting));
    this.scheduleSuspendCheck();
    // Dropped with the run unless it stays resident; then a resume rejects it with REDO.
    return new Promise<never>((_, reject) => {
      this.blocked.push(() => reject(REDO));
    });
  }

  /**
   * Suspend once every branch of the body waits: nothing in flight (a sibling step, an inbox
   * read, a child's start), no outcome left to hand over, and at least one call blocked.
   */
  private scheduleSuspendCheck(): void {
    if (this.suspendCheck) return;
    this.suspendCheck = true;
    setImmediate(() => {
      this.suspendCheck = false;
      if (this.ended || this.inFlight > 0 || this.deliveries.ready) return;
      const stalled = this.deliveries.stalledAt;
      if (stalled !== undefined) {
        const record = this.state.calls[stalled]!;
        if (record.kind === 'update' && stalled === this.cursor) {
          this.replayUpdate(record);
          return;
        }
        // Replay reached a point the first run passed only after making this call.
        this.fatal = new NonDeterminismError(this.executionId, stalled, record, {
          kind: 'wait',
          name: 'every branch waiting without making it',
        });
        this.resolveSuspend();
      } else if (this.waits.length > 0) {
        // Updates are applied here, where every branch waits, and only past the log's calls.
        if (this.updateHandlers?.any === true && this.cursor >= this.state.calls.length) this.applyUpdates();
        else this.resolveSuspend();
      }
    });
  }

  /** Replay reached the quiet point where the log applied an update: apply it again (adr/0049). */
  private replayUpdate(record: CallRecord): void {
    try {
      this.updates.replay(record);
    } catch (error) {
      this.fatal ??= error;
      this.resolveSuspend();
      return;
    }
    this.deliveries.pass(record.position);
  }

  /** Every branch waits: apply the oldest waiting update and look again; suspend once none is left. */
  private applyUpdates(): void {
    this.inFlight += 1;
    this.updates.applyNext().then(
      (applied) => {
        this.inFlight -= 1;
        if (this.ended) return;
        if (!applied && this.inFlight === 0 && !this.deliveries.ready) this.resolveSuspend();
        else this.scheduleSuspendCheck();
      },
      (error: unknown) => {
        this.inFlight -= 1;
        this.fatal ??= error;
        this.resolveSuspend();
      },
    );
  }

  /** What the run suspends on: its waits, and the inbox names of its update handlers (a sender wakes it). */
  private suspendedOn(): Wait[] {
    if (this.updateHandlers?.any !== true) return this.waits;
    return [...this.waits, ...this.updates.inboxNames().map((signal) => ({ signal }))];
  }

  private async complete(value: unknown): Promise<RunOutcome> {
    let output = value;
    try {
      if (this.workflow.output !== undefined) {
        output = parseWith(
          this.workflow.output,
          value,
          `output of workflow "${this.workflow.name}"`,
          'output',
        );
      }
      encode(output);
    } catch (error) {
      return this.fail(error);
    }
    try {
      return await this.end('EXECUTION_COMPLETED', { output });
    } catch (error) {
      if (!(error instanceof PayloadTooLargeError)) throw error;
      return this.fail(error);
    }
  }

  private async fail(error: unknown): Promise<RunOutcome> {
    const state = recordFailure(this.writer, 'EXECUTION_FAILED', error, 'workflow error', (recorded) => ({
      error: recorded,
    }));
    await this.writer.flush();
    return { kind: 'terminal', state };
  }

  private async end(
    type: 'EXECUTION_COMPLETED' | 'EXECUTION_CANCELLED',
    payload: object,
  ): Promise<RunOutcome> {
    const state = this.writer.record(
      type,
      payload,
      type === 'EXECUTION_COMPLETED' ? 'workflow output' : 'workflow error',
    );
    await this.writer.flush();
    return { kind: 'terminal', state };
  }

  /** The body returned while the log holds calls it never made: the code changed under the log. */
  private checkReachedEnd(): void {
    const record = this.state.calls[this.cursor];
    if (record !== undefined) {
      throw new NonDeterminismError(this.executionId, this.cursor, record, {
        kind: 'return',
        name: 'end of workflow',
      });
    }
  }

  private throwIfAborted(): void {
    if (this.fatal !== undefined) throw this.fatal;
    if (this.writer.failed !== undefined) throw this.writer.failed;
  }

  private assertUsable(): void {
    if (this.ended) {
      this.strayed = true;
      throw new Error(`execution "${this.executionId}": workflow context used after its run ended`);
    }
    this.throwIfAborted();
  }
}
