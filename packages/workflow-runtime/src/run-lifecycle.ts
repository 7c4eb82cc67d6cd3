/**
 * The run lifecycle: write seq 0 of a new execution (with a retry when a holder fenced the
 * start out), take an existing one over or resume it, run the body in the background, and the
 * work after it ends or suspends (queue item, timer rows, the wake-up timer). The `Runtime`
 * facade (`runtime.ts`) validates what callers pass and hands the runs to this module.
 */
import { isBlockingError, recordBlockage } from './blockage.js';
import type { Codec } from './codec.js';
import { adoptInbox } from './continuation-chain.js';
import { wakeAtWithDeadline } from './deadlines.js';
import type { DestinationShares } from './destination-shares.js';
import {
  ExecutionAlreadyExistsError,
  ExecutionNotFoundError,
  InvalidInputError,
  StartFencedOutError,
  UnknownWorkflowError,
} from './errors.js';
import {
  type CarriedSignal,
  type ContinuedFrom,
  type DeadlineRecord,
  isTerminalStatus,
  type StartedPayload,
  type StoredEvent,
} from './events.js';
import { ExecutionRun, type RunHost, type RunOutcome } from './execution-run.js';
import type { FanOutCallDeps } from './fan-out-call.js';
import type { ExecutionState } from './fold.js';
import { newId } from './ids.js';
import type { ExecutionLeases } from './leases.js';
import { saveSnapshot } from './load-state.js';
import { LogWriter, type LogWriterOptions } from './log-writer.js';
import type { Observers } from './observers.js';
import { EXECUTION_PENDING_TOPIC, type ExecutionPendingPayload, type OutboxMessage } from './outbox.js';
import { type OutboxHeadersHook, outboxHeadersOf } from './outbox-headers.js';
import type { QueueRegistry } from './queues/define-queue.js';
import {
  arrived,
  holdsSlot,
  type QueuedResumeDeps,
  type QueuePlace,
  releaseSuspendedSlot,
} from './queues/queued-resume.js';
import { type Resident, ResidentBodies } from './resident-bodies.js';
import { lostResumeRace, resumeFence } from './resume-fence.js';
import { afterFeatureRun, hasFeatureWork } from './resume-on-arrival.js';
import type { RunFeatures } from './run-internals.js';
import { RunningBodies } from './running-bodies.js';
import { type ExecuteOptions, type ExecuteRequest, executeOptionsSchema } from './runtime-options.js';
import type { FeatureDeps, TakeoverEvent } from './signal-child-deps.js';
import type { PendingTakeover, Stores, Timer } from './spi.js';
import { assertUnscopedMayCreate, crossesTenant } from './tenancy.js';
import type { WakeTimers } from './wake-timers.js';
import { type AnyWorkflow, parseWith, type WorkflowRegistry } from './workflow.js';

const START_RETRIES = 3;

/**
 * The fence of a first start attempt. Every execution begins in fence epoch 0, so a start
 * needs no fence write of its own; a takeover always acquires a larger one (adr/0003).
 */
const BOOTSTRAP_FENCE = 0;

export type Bootstrapped = 'exists' | { outcome: Promise<RunOutcome> };

/** How a start writes seq 0. */
export interface BootstrapOptions {
  /** Run the body here once seq 0 is durable (`start`, a child); false leaves it `pending` (`enqueue`). */
  run: boolean;
  /** The caller's fence (a dispatcher's lease), never retried here (default: 0, then fresh ones). */
  fence?: number;
  /** The parent of a child execution. */
  parentId?: string;
  /** The queue of an enqueued execution (`enqueue({ queue })`, a continue-as-new successor of one). */
  queue?: QueuePlace;
  /** The successor of a `ctx.continueAsNew`: where it sits in its chain (adr/0063). */
  continuedFrom?: ContinuedFrom;
  /** The deadline seq 0 records; its timer row exists already (deadlines.ts). */
  deadline?: DeadlineRecord;
  /** Signals seq 0 carries (`signalWithStart`). */
  signals?: CarriedSignal[];
  /** The input is the schema's output already (parsed once by the caller; default: false). */
  inputParsed?: boolean;
}

/** What the run lifecycle needs from its runtime. */
export interface RunLifecycleDeps {
  stores: Stores;
  registry: WorkflowRegistry;
  codec: Codec;
  clock: () => number;
  maxPayloadBytes: number;
  /** Events between snapshots; 0 turns snapshots off. */
  snapshotEvery: number;
  onError: (error: unknown, context: string) => void;
  /** The tenant every store is scoped to, or undefined when none is (adr/0024). */
  tenant: string | undefined;
  /** The observers, or undefined when there are none (then nothing is recorded for them). */
  observers: Observers | undefined;
  /** Whether an enqueue writes `execution.pending` to the outbox with seq 0. */
  outbox: boolean;
  /** Asked for the headers of each `execution.pending` message (default: none). */
  outboxHeaders?: OutboxHeadersHook | undefined;
  /** The execution leases, or undefined when they are off. */
  leases: ExecutionLeases | undefined;
  wakeTimers: WakeTimers;
  queues: QueueRegistry;
  /** What resumes of queue executions need (adr/0056). */
  queuedResume: QueuedResumeDeps;
  /** The shares of steps that declared a destination (adr/0057). */
  destinations: DestinationShares;
  /** What signals, children and cancellation need from the runtime. */
  features: FeatureDeps;
  /** The `RunFeatures` every run shares. */
  runFeatures: RunFeatures;
  /** The fan-out stores every run's `ctx.fanOut` uses. */
  fanOut: FanOutCallDeps;
  /** True once the runtime's `close()` was called. */
  closed(): boolean;
  /** Most suspended bodies kept resident (`createRuntime({ cache })`, adr/0068); 0 keeps none. */
  maxResident: number;
  /** The folded state; `snapshots: false` folds from seq 0 without reading a snapshot. */
  loadState(executionId: string, snapshots?: boolean): Promise<ExecutionState | null>;
  /** The state `events` (a whole log, seq 0 first) fold to; null for none. */
  foldLog(events: readonly StoredEvent[]): ExecutionState | null;
  /** Enforces the deadline of a run in progress here on time (deadlines.ts); the stop function. */
  watchDeadline(state: ExecutionState): () => void;
}

/** Starts, takes over and runs the executions of one runtime; see the module comment. */
export class RunLifecycle {
  /** Runs in progress in this runtime, by execution, until their after-run work is done. */
  readonly active = new Map<string, Promise<RunOutcome>>();
  /** Runs whose body is in progress here, by execution (runs of one id may overlap). */
  readonly bodies = new RunningBodies<ExecutionRun>();
  /** Bodies that suspended here, kept to resume in memory (resident-bodies.ts, adr/0068). */
  readonly resident: ResidentBodies;
  private readonly stores: Stores;
  private readonly registry: WorkflowRegistry;
  private readonly codec: Codec;
  private readonly clock: () => number;
  private readonly maxPayloadBytes: number;
  private readonly snapshotEvery: number;
  private readonly onError: (error: unknown, context: string) => void;
  private readonly tenant: string | undefined;
  private readonly observers: Observers | undefined;
  private readonly outbox: boolean;
  private readonly outboxHeaders: OutboxHeadersHook | undefined;
  private readonly leases: ExecutionLeases | undefined;
  private readonly wakeTimers: WakeTimers;
  private readonly queues: QueueRegistry;
  private readonly queuedResume: QueuedResumeDeps;
  private readonly destinations: DestinationShares;
  private readonly features: FeatureDeps;
  private readonly runFeatures: RunFeatures;
  private readonly fanOut: FanOutCallDeps;
  private readonly closed: () => boolean;
  private readonly loadState: (executionId: string, snapshots?: boolean) => Promise<ExecutionState | null>;
  private readonly foldLog: (events: readonly StoredEvent[]) => ExecutionState | null;
  private readonly watchDeadline: (state: ExecutionState) => () => void;
  /** What every run of this runtime is given (one object, not one per run). */
  private readonly runHost: RunHost;
  /** Saves a snapshot after a durable append, every `snapshotEvery` events; undefined when off. */
  private readonly onDurable: LogWriterOptions['onDurable'];
  /** Tells the observers of each durable append; undefined without observers. */
  private readonly onAppended: LogWriterOptions['onAppended'];

  constructor(deps: RunLifecycleDeps) {
    this.stores = deps.stores;
    this.registry = deps.registry;
    this.codec = deps.codec;
    this.clock = deps.clock;
    this.maxPayloadBytes = deps.maxPayloadBytes;
    this.snapshotEvery = deps.snapshotEvery;
    this.onError = deps.onError;
    this.tenant = deps.tenant;
    this.observers = deps.observers;
    this.outbox = deps.outbox;
    this.outboxHeaders = deps.outboxHeaders;
    this.leases = deps.leases;
    this.wakeTimers = deps.wakeTimers;
    this.queues = deps.queues;
    this.queuedResume = deps.queuedResume;
    this.destinations = deps.destinations;
    this.features = deps.features;
    this.runFeatures = deps.runFeatures;
    this.fanOut = deps.fanOut;
    this.closed = deps.closed;
    this.loadState = deps.loadState;
    this.foldLog = deps.foldLog;
    this.watchDeadline = deps.watchDeadline;
    this.resident = new ResidentBodies(deps.maxResident, deps.stores.events);
    this.runHost = {
      clock: this.clock,
      scheduleTimers: (timers) => this.scheduleTimers(timers),
      features: this.runFeatures,
      destinations: this.destinations,
      fanOut: this.fanOut,
    };
    const every = this.snapshotEvery;
    this.onDurable =
      every > 0
        ? (durable, fromSeq) => saveSnapshot(this.stores.snapshots, durable, fromSeq, every, this.onError)
        : undefined;
    this.onAppended = this.observers === undefined ? undefined : this.observers.appended.bind(this.observers);
  }

  /** `execute` of a parsed request (the maintenance's own takeovers come straight here). */
  async execute(parsed: ExecuteRequest, options: ExecuteOptions): Promise<ExecutionState> {
    // The common call passes no options: skip their parse on the hot path.
    const plain = options.fence === undefined && options.startOnly === undefined;
    const { fence, startOnly, expect, existing, takeover } =
      plain &&
      options.expect === undefined &&
      options.existing === undefined &&
      options.takeover === undefined
        ? options
        : parseWith(executeOptionsSchema, options, 'execute options', 'options');
    if (takeover !== undefined) {
      refuseTakeoverWith(parsed, takeover, { fence, startOnly, expect });
      return this.continueTakenOver(parsed, takeover as PendingTakeover, existing === true);
    }
    // Without a fence, and with an input the workflow accepts, the caller usually starts a new
    // execution: write seq 0 straight away and read only when it exists (one round trip
    // fewer). Without an input (a supervisor's claim, a recovery) it continues one: fold it
    // at once (a missing one folds to null). Otherwise (a dispatcher's attempt) it may start
    // one: one indexed read first, and only existing ones are folded.
    // A claim (`expect`, `existing`) folds first. A queue's item may be claimed between its write
    // and seq 0's: missing, it starts below as a new one. A pending one never ran, so it has no
    // snapshot to read (folding without one is always right, L5).
    const foldsFirst = existing === true || expect !== undefined;
    let current: ExecutionState | null = foldsFirst
      ? await this.loadState(parsed.executionId, expect?.status !== 'pending')
      : null;
    const folded = foldsFirst && (current !== null || expect !== undefined);
    const accepted = !folded && fence === undefined ? this.acceptedInput(parsed) : undefined;
    if (folded) {
      // folded: go on below
    } else if (accepted !== undefined) {
      const definition = this.registry.get(parsed.workflow, parsed.version);
      const begun = await this.bootstrapWithRetry(definition, parsed.executionId, accepted.data, {
        run: true,
        inputParsed: true,
      });
      // Handed on, not awaited: this frame need not stay alive for the whole run (adr/0097).
      if (begun !== 'exists') return begun.outcome.then(stateOf);
      current = await this.loadState(parsed.executionId);
      if (current === null) throw new ExecutionAlreadyExistsError(parsed.executionId, parsed.workflow);
    } else if (parsed.input === undefined) {
      current = await this.loadState(parsed.executionId);
    } else {
      const exists = (await this.stores.events.getExecution(parsed.executionId)) !== null;
      current = exists ? await this.loadState(parsed.executionId) : null;
    }
    if (current === null && expect !== undefined) throw new ExecutionNotFoundError(parsed.executionId);
    if (current === null) {
      const definition = this.registry.get(parsed.workflow, parsed.version);
      const begun = await this.bootstrapWithRetry(definition, parsed.executionId, parsed.input, {
        run: true,
        fence,
      });
      // Another caller won seq 0 and owns the run: a superseded refusal, not ours to take over.
      if (begun === 'exists') throw new ExecutionAlreadyExistsError(parsed.executionId, parsed.workflow);
      return begun.outcome.then(stateOf);
    }
    if (current.workflow !== parsed.workflow || startOnly === true) {
      throw new ExecutionAlreadyExistsError(parsed.executionId, current.workflow);
    }
    // A queue's claim of an execution that ended without its item leaving (its runner died in
    // between): the item leaves now, so the queue does not admit it again.
    if (existing === true && current.queue !== undefined && isTerminalStatus(current.status))
      await this.finishItem(current);
    if (!meets(current, expect)) return current;
    // A queue's claim holds the slot it just took: no need to look it up again.
    return this.continueExecution(current, fence, existing === true);
  }

  /**
   * A pending execution the caller took over in its store (`EventStore.takeOverPending`): its
   * log folded is the re-read right before acting, its fence the takeover's. `slotHeld`: the
   * caller holds its queue slot (a queue's claim), so the run does not look it up.
   */
  private async continueTakenOver(
    request: ExecuteRequest,
    takeover: PendingTakeover,
    slotHeld: boolean,
  ): Promise<ExecutionState> {
    const current = this.foldLog(takeover.events);
    if (current === null) throw new ExecutionNotFoundError(request.executionId);
    if (current.workflow !== request.workflow)
      throw new ExecutionAlreadyExistsError(request.executionId, current.workflow);
    if (current.status !== 'pending') return current;
    return this.continueExecution(current, takeover.fence, slotHeld);
  }

  /** The parsed input when `request` names a registered workflow and carries an input it accepts. */
  private acceptedInput(request: ExecuteRequest): { data: unknown } | undefined {
    if (!this.registry.has(request.workflow, request.version)) return undefined;
    const result = this.registry.get(request.workflow, request.version).input.safeParse(request.input);
    return result.success ? result : undefined;
  }

  /**
   * Bootstrap, first at the bootstrap fence 0 (no extra write), and again with a freshly
   * acquired fence when a holder that never wrote seq 0 fenced the start out.
   */
  async bootstrapWithRetry(
    definition: AnyWorkflow,
    executionId: string,
    input: unknown,
    how: BootstrapOptions,
  ): Promise<Bootstrapped> {
    const given = how.fence;
    for (let attempt = 1; ; attempt++) {
      try {
        const fence =
          given ?? (attempt === 1 ? BOOTSTRAP_FENCE : await this.stores.events.acquireFence(executionId));
        return await this.bootstrap(definition, executionId, input, how, fence);
      } catch (error) {
        // A caller's fence is the caller's to retry (a dispatcher allocates a new one).
        if (!(error instanceof StartFencedOutError) || attempt >= START_RETRIES || given !== undefined)
          throw error;
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * attempt));
      }
    }
  }

  /**
   * Write seq 0 (validating everything first, L7) and, when `run`, run the body. Resolves
   * once seq 0 is durable with the run's outcome, or 'exists' when another start of the
   * same workflow won seq 0. Seq 0 shares its append with whatever the body records before
   * its first step runs (a workflow without steps commits once).
   */
  private async bootstrap(
    definition: AnyWorkflow,
    executionId: string,
    rawInput: unknown,
    how: BootstrapOptions,
    fence: number,
  ): Promise<Bootstrapped> {
    const { run, parentId, queue, continuedFrom, deadline, signals, inputParsed } = how;
    const input =
      inputParsed === true
        ? rawInput
        : parseWith(definition.input, rawInput, `input of workflow "${definition.name}"`, 'input');
    if (this.tenant === undefined && crossesTenant(executionId, parentId))
      await assertUnscopedMayCreate(this.stores.events, executionId, parentId);
    const started: StartedPayload = { workflow: definition.name, version: definition.version, input };
    if (parentId !== undefined) started.parentId = parentId;
    if (queue !== undefined) {
      started.queue = queue.queue;
      if (queue.partitionKey !== undefined && queue.partitionKey !== '')
        started.partitionKey = queue.partitionKey;
      if (queue.priority !== undefined && queue.priority !== 0) started.priority = queue.priority;
    }
    if (continuedFrom !== undefined) started.continuedFrom = continuedFrom;
    if (deadline !== undefined) started.deadline = deadline;
    if (signals !== undefined) started.signals = signals;
    // Encodes and checks the size (L7): an input the log cannot hold throws here, nothing written.
    const writer = this.writer(executionId, definition.name, fence, 0, null);
    writer.record('EXECUTION_STARTED', started, `input of workflow "${definition.name}"`);
    if (!run && this.outbox) writer.attachOutbox(this.pendingMessage(executionId, definition));
    const outcome = run ? this.launch(definition, writer) : writer.flush().then(() => undefined);
    // Handed on, not awaited: this frame need not stay alive until seq 0 is durable (adr/0097).
    return Promise.race([writer.firstAppend, outcome]).then(
      () => ({ outcome: outcome as Promise<RunOutcome> }),
      (error: unknown) => this.startRefused(definition, executionId, error),
    );
  }

  /** A start whose seq 0 was refused: 'exists' when another start of the same workflow won it. */
  private async startRefused(
    definition: AnyWorkflow,
    executionId: string,
    error: unknown,
  ): Promise<'exists'> {
    if (!(error instanceof ExecutionAlreadyExistsError)) throw error;
    const existing = await this.stores.events.getExecution(executionId);
    if (existing?.workflow === definition.name) return 'exists';
    throw new ExecutionAlreadyExistsError(executionId, existing?.workflow, { cause: error });
  }

  /**
   * Run `current` on here: a suspended one once its wait is over, a pending or running one
   * taken over. One of a queue runs only where its slot is held (`slotHeld`: the caller knows
   * it is, a queue's claim); otherwise it is left to its queue (queues/queued-resume.ts).
   */
  async continueExecution(
    current: ExecutionState,
    given?: number,
    slotHeld = false,
  ): Promise<ExecutionState> {
    if (isTerminalStatus(current.status)) return current;
    if (current.continuedFrom !== undefined) await adoptInbox(this.features, current);
    const resumed = current.status === 'suspended';
    // A suspended execution resumes once its wait is over: a timer due, or a signal or child it
    // waits for there (a queue's claim resumes either). Every run of a queue's execution, a
    // resume or a takeover, holds its slot.
    const due = resumed && this.isDue(current);
    if (resumed && !due && !(await arrived(this.stores, current))) return current;
    if (!slotHeld && !(await holdsSlot(this.queuedResume, current))) return current;
    // Pinned to a version this node does not run: left as it is for a node that does (nothing written).
    if (!this.registry.has(current.workflow, current.version))
      throw new UnknownWorkflowError(
        current.workflow,
        current.version,
        this.registry.names(),
        current.executionId,
      );
    const definition = this.registry.get(current.workflow, current.version);
    // A resume takes no new fence (adr/0016); a takeover of pending or running work does.
    const fence =
      given ??
      (resumed
        ? await resumeFence(this.stores.events, current)
        : await this.stores.events.acquireFence(current.executionId));
    const takeoverSeq = current.sequence + 1; // the run's writer folds into `current` from here on
    const resident = this.resident.takeFitting(current, fence, definition, resumed);
    const writer = this.writer(current.executionId, current.workflow, fence, takeoverSeq, current);
    writer.record(
      resumed ? 'EXECUTION_RESUMED' : 'EXECUTION_RECOVERED',
      {
        reason: resumed
          ? due
            ? 'a timer is due'
            : 'a signal or child it waits for arrived'
          : `taken over from status ${current.status}`,
        fence,
        ...(current.status === 'pending' ? { claimed: true } : {}),
      },
      'takeover',
    );
    try {
      return (await this.launch(definition, writer, resident)).state;
    } catch (error) {
      // Another node resumed it first: nothing was written here; report where it stands.
      if (resumed && lostResumeRace(error, takeoverSeq))
        return (await this.loadState(current.executionId)) ?? current;
      throw error;
    }
  }

  private isDue(state: ExecutionState): boolean {
    const now = this.clock();
    return state.timers.some((timer) => timer.dueAt <= now);
  }

  /** Take `current` over under `fence`: record `events` first, then replay and run it in the background. */
  takeOver(
    current: ExecutionState,
    fence: number,
    events: readonly TakeoverEvent[],
  ): { outcome: Promise<RunOutcome>; firstAppend: Promise<void> } {
    const definition = this.registry.get(current.workflow, current.version);
    // Only a plain resume goes on in memory; a cancellation (or anything else) replays.
    const plain = events.length === 1 && events[0]!.type === 'EXECUTION_RESUMED';
    const resident = this.resident.takeFitting(current, fence, definition, plain);
    const writer = this.writer(current.executionId, current.workflow, fence, current.sequence + 1, current);
    for (const event of events) writer.record(event.type, event.payload, 'takeover');
    // Durable at once, so nothing that reads the log meanwhile still sees it suspended.
    writer.flush().catch(() => undefined); // the same failure reaches the run's next flush
    const outcome = this.launch(definition, writer, resident);
    // Its callers attach their own handlers, some only after awaiting the first append.
    outcome.catch(() => undefined);
    return { outcome, firstAppend: writer.firstAppend };
  }

  /**
   * Run the body in the background, or go on with a `resident` one (adr/0068); track it so
   * `result()` and `close()` can wait for it.
   */
  private launch(definition: AnyWorkflow, writer: LogWriter, resident?: Resident): Promise<RunOutcome> {
    const run = resident?.run ?? new ExecutionRun(this.runHost, definition, writer);
    const executionId = run.executionId;
    const lease = this.leases?.hold(executionId, writer.fence, writer);
    // Counted while the body runs (not during afterRun): a wake-up skips such a run, which
    // reads the inbox itself or re-checks after suspending (resume-on-arrival.ts).
    this.bodies.add(run);
    // A resident body goes on once the work after its suspension is done (it reads its arrays).
    const running = resident === undefined ? run.run() : resident.afterWork.then(() => run.resume(writer));
    this.resident.running(run);
    const unwatch = this.watchDeadline(writer.state!);
    // One async function per run waits for the body and does everything after it (queue
    // slot, timer rows, signals, a parent, the lease): fewer promises and closures than a chain
    // of then/finally, and one frame alive while the body runs, not two (adr/0097).
    const finish = async (): Promise<RunOutcome> => {
      try {
        let result: RunOutcome;
        try {
          result = await running;
        } catch (error) {
          this.resident.landed(run);
          this.bodies.delete(run);
          await this.noteBlockage(executionId, writer, error);
          throw error;
        }
        const kept = this.closed() ? undefined : this.resident.keepSuspended(run, result);
        this.resident.landed(run);
        try {
          // A suspended run of a queue gives its slot back before anything here can resume it
          // (a wake-up timer, a signal's re-check; they wait while the body counts as running).
          if (result.kind === 'suspended') await this.releaseSlot(result.state);
          this.bodies.delete(run);
          const after = this.afterRun(executionId, run, result);
          if (after !== undefined) await after;
          if (hasFeatureWork(definition, run, result))
            await afterFeatureRun(this.features, definition, run, result);
          return result;
        } finally {
          kept?.();
        }
      } finally {
        const releasing = lease?.release();
        if (releasing !== undefined) await releasing;
        unwatch();
        if (this.active.get(executionId) === outcome) this.active.delete(executionId);
      }
    };
    const outcome = finish();
    this.active.set(executionId, outcome);
    return outcome;
  }

  private async releaseSlot(state: ExecutionState): Promise<void> {
    const { executionId } = state;
    try {
      await releaseSuspendedSlot(this.queuedResume, state);
    } catch (error) {
      // The slot lapses at its TTL instead; the queue admits the execution again then.
      this.onError(error, `release of the queue slot of suspended execution "${executionId}"`);
    }
  }

  /**
   * A run that failed with an error every run of this log meets again: record the blockage at
   * the last seq the run made durable, before its caller hears of the error (adr/0058).
   */
  private async noteBlockage(executionId: string, writer: LogWriter, error: unknown): Promise<void> {
    if (this.stores.blockages === undefined || !isBlockingError(error)) return;
    const seq = await writer.settledSeq();
    if (seq === undefined || seq < 0) return; // fenced out, or nothing of the execution exists
    await recordBlockage(
      { stores: this.stores, clock: this.clock, onError: this.onError },
      executionId,
      seq,
      error,
    );
  }

  /**
   * The work after a run that ended or suspended, or undefined when there is none (a run that
   * used no timer, in no queue, ended): no promise for the common end.
   */
  private afterRun(executionId: string, run: ExecutionRun, outcome: RunOutcome): Promise<void> | undefined {
    const { state } = outcome;
    const terminal = outcome.kind === 'terminal';
    // A crash between TIMER_FIRED and deleting its row leaves the row behind; an execution
    // that ever used a timer clears every row of its own once it is terminal.
    const clearsTimers =
      terminal && (state.deadline !== undefined || state.calls.some((call) => call?.timerId !== undefined));
    // An execution of a queue leaves it at its end, whichever node ran it (its deduplicationId is
    // free); one in no queue (seq 0 names none) has no item to delete.
    const finishes = terminal && state.queue !== undefined;
    const wakeAt = outcome.kind === 'suspended' ? wakeAtWithDeadline(outcome.wakeAt, state) : undefined;
    if (!finishes && !clearsTimers && run.firedTimers.length === 0) {
      if (wakeAt !== undefined && !this.closed()) this.wakeTimers.set(executionId, wakeAt);
      return undefined;
    }
    return this.afterRunWork(executionId, run, state, { finishes, clearsTimers, wakeAt });
  }

  private async afterRunWork(
    executionId: string,
    run: ExecutionRun,
    state: ExecutionState,
    how: { finishes: boolean; clearsTimers: boolean; wakeAt: number | undefined },
  ): Promise<void> {
    if (how.finishes) await this.finishItem(state);
    await Promise.all(run.firedTimers.map((timerId) => this.stores.timers.complete(timerId)));
    if (how.clearsTimers) {
      const rows = await this.stores.timers.forExecution(executionId);
      await Promise.all(rows.map((row) => this.stores.timers.complete(row.timerId)));
    }
    if (how.wakeAt !== undefined && !this.closed()) this.wakeTimers.set(executionId, how.wakeAt);
  }

  /** Delete the queue item of `state`, an ended execution of a queue. */
  private async finishItem(state: ExecutionState): Promise<void> {
    if (this.stores.queues !== undefined) await this.stores.queues.finish(state.executionId);
  }

  private async scheduleTimers(timers: Timer[]): Promise<void> {
    await Promise.all(timers.map((timer) => this.stores.timers.schedule(timer)));
  }

  private writer(
    executionId: string,
    workflow: string,
    fence: number,
    nextSeq: number,
    state: ExecutionState | null,
  ): LogWriter {
    return new LogWriter(
      {
        events: this.stores.events,
        executionId,
        workflow,
        fence,
        nextSeq,
        maxPayloadBytes: this.maxPayloadBytes,
        clock: this.clock,
        codec: this.codec,
        onDurable: this.onDurable,
        onAppended: this.onAppended,
      },
      state,
    );
  }

  /** The `execution.pending` message of an enqueue, written with its seq 0 (O1). */
  private pendingMessage(executionId: string, definition: AnyWorkflow): OutboxMessage {
    const payload: ExecutionPendingPayload = {
      executionId,
      workflow: definition.name,
      version: definition.version,
    };
    const now = this.clock();
    return {
      id: newId(),
      topic: EXECUTION_PENDING_TOPIC,
      key: executionId,
      payload: JSON.stringify(payload),
      createdAt: now,
      ...outboxHeadersOf(this.outboxHeaders, executionId, this.onError),
    };
  }
}

/** Whether `state` is still what the caller claimed it in (`ExecuteOptions.expect`). */
function meets(state: ExecutionState, expect: ExecuteOptions['expect']): boolean {
  if (expect === undefined) return true;
  return (
    state.status === expect.status && (expect.sequence === undefined || state.sequence === expect.sequence)
  );
}

/**
 * A takeover comes alone, for the request's execution, with its whole log: refused with
 * `InvalidInputError` before anything is written otherwise.
 */
function refuseTakeoverWith(
  request: ExecuteRequest,
  takeover: { executionId: string; events: readonly { executionId: string; seq: number }[] },
  others: Record<string, unknown>,
): void {
  const issues: { path: string; message: string }[] = [];
  for (const [name, value] of Object.entries(others))
    if (value !== undefined) issues.push({ path: name, message: 'must not be given with takeover' });
  if (takeover.executionId !== request.executionId)
    issues.push({
      path: 'takeover.executionId',
      message: `must be the request's execution "${request.executionId}", got "${takeover.executionId}"`,
    });
  takeover.events.forEach((event, i) => {
    if (event.executionId !== request.executionId || event.seq !== i)
      issues.push({
        path: `takeover.events.${i}`,
        message: `must be seq ${i} of "${request.executionId}", got seq ${event.seq} of "${event.executionId}"`,
      });
  });
  if (issues.length > 0) throw new InvalidInputError('execute options', issues);
}

/** The state a run ended or suspended at. */
function stateOf(outcome: RunOutcome): ExecutionState {
  return outcome.state;
}
