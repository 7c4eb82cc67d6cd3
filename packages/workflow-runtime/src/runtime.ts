/**
 * The `Runtime` facade: starts, executes, resumes and inspects executions over a set of
 * stores. It validates what callers pass and hands runs to the run lifecycle
 * (`run-lifecycle.ts`). `execute` is idempotent (docs/architecture.md#executing): bootstrap
 * when the log is empty, take over with a new fence when it is pending or running, and write
 * nothing when it is terminal.
 */
import { z } from 'zod';
import { blockageStands, blockedView } from './blockage.js';
import { type CancelResult, cancelExecution } from './cancellation.js';
import { Codec, DEFAULT_MAX_PAYLOAD_BYTES } from './codec.js';
import { currentRun } from './continuation-chain.js';
import { handOverDeps } from './continuation-features.js';
import { deadLetterExecution } from './dead-letter.js';
import {
  cancelledErrorOf,
  type DeadlineDeps,
  DeadlineWatch,
  deadlineOf,
  enforceDeadline,
  scheduleDeadline,
} from './deadlines.js';
import { DestinationShares } from './destination-shares.js';
import { optionalPositiveMs } from './durations.js';
import { checkedErrorClasses, ErrorClassRegistry } from './error-classes.js';
import {
  ExecutionFailedError,
  ExecutionInputMismatchError,
  ExecutionNotFoundError,
  InvalidInputError,
  RuntimeClosedError,
} from './errors.js';
import type { CarriedSignal, DeadlineRecord, StreamEntry } from './events.js';
import { type Envelope, isTerminalStatus, type StartedPayload } from './events.js';
import { type FanOutResult, fanOutDepsOf, fanOutResultsOf, fanOutShardsOf } from './fan-out-runtime.js';
import type { FanOutStore } from './fan-out-store.js';
import type { ExecutionState } from './fold.js';
import { type ForkOptions, forkExecution } from './fork.js';
import { handleOn, isWorkflowDefinition, type UntrustedInput } from './handles.js';
import { assertExecutionId, assertName, newId } from './ids.js';
import { type ListPage, type ListQuery, listExecutions } from './inspection.js';
import { DEFAULT_LEASE_TTL_MS, ExecutionLeases } from './leases.js';
import { foldLog, loadState, readHistory } from './load-state.js';
import {
  Maintenance,
  type MaintenanceOptions,
  type MaintenancePass,
  maintenanceOptionsSchema,
} from './maintenance.js';
import { Observers } from './observers.js';
import { checkOutboxHeadersOption } from './outbox-headers.js';
import { type GetEventOptions, getEvent } from './published-events.js';
import { QueueRegistry } from './queues/define-queue.js';
import { enqueueItem, queueStoreOf, usesQueue } from './queues/queued-enqueue.js';
import { holdsSlot, type QueuedResumeDeps } from './queues/queued-resume.js';
import { type ResumeOptions, type ResumeResult, resumeExecution } from './redrive.js';
import { maxResidentOf } from './resident-bodies.js';
import { type ResultOptions, resultOptions, withDeadline } from './result-wait.js';
import { resumeIfArrived } from './resume-on-arrival.js';
import { type BootstrapOptions, type Bootstrapped, RunLifecycle } from './run-lifecycle.js';
import {
  type EnqueueOptions,
  type ExecuteOptions,
  type ExecuteRequest,
  executeRequestSchema,
  executionIdSchema,
  type RuntimeOptions,
  type StartOptions,
  startOptionsSchema,
  type WorkflowHandle,
} from './runtime-options.js';
import { sameRecordedValue } from './same-value.js';
import { ScheduleRegistry } from './schedules/define-schedule.js';
import { fireSchedule, scheduleStoreOf, setPaused, stateOf } from './schedules/fire-schedules.js';
import type { ScheduleState } from './schedules/schedule-spi.js';
import { type FeatureDeps, runFeatures } from './signal-child-deps.js';
import { maxPendingSignalsOf, type SignalOptions, type SignalResult, sendSignal } from './signal-send.js';
import { carriedSignalOf, type StartSignal } from './signal-with-start.js';
import type { Stores } from './spi.js';
import { type ReadStreamOptions, readStream } from './stream-read.js';
import { storesTenant } from './tenancy.js';
import { sendUpdate, type UpdateOptions } from './update-send.js';
import { WakeTimers } from './wake-timers.js';
import {
  type AnyWorkflow,
  parseWith,
  type SignalInput,
  type SignalName,
  type UpdateInput,
  type UpdateName,
  type WorkflowDefinition,
  type WorkflowMessages,
  WorkflowRegistry,
} from './workflow.js';

/** How long a timer claim holds before another node may fire the timer. */
const TIMER_CLAIM_TTL_MS = 30_000;

export type {
  EnqueueOptions,
  ExecuteOptions,
  ExecuteRequest,
  ForkOptions,
  ResultOptions,
  ResumeOptions,
  ResumeResult,
  RuntimeOptions,
  StartOptions,
  WorkflowHandle,
};

/** Runs workflows durably over `stores`; see {@link createRuntime}. */
export class Runtime {
  readonly stores: Stores;
  readonly nodeId: string;
  private readonly registry: WorkflowRegistry;
  /** Encodes payloads and revives recorded errors, with the classes of `errors` and the workflows'. */
  readonly codec: Codec;
  private readonly clock: () => number;
  private readonly maxPayloadBytes: number;
  private readonly onError: (error: unknown, context: string) => void;
  private readonly wakeTimers: WakeTimers;
  /** Owner of this runtime's execution leases (its `nodeId` unless `lease.owner` says otherwise). */
  readonly leaseOwner: string;
  /** Lease time-to-live when leases are on; undefined when they are off. */
  readonly leaseTtlMs: number | undefined;
  private closed = false;
  private readonly features: FeatureDeps;
  /** Starts, takes over and runs this runtime's executions (run-lifecycle.ts). */
  private readonly lifecycle: RunLifecycle;
  /** The observers, or undefined when there are none (then nothing is recorded for them). */
  private readonly observers: Observers | undefined;
  /** The in-process maintenance, or undefined when it is off (adr/0042). */
  private maintenance: Maintenance | undefined;
  /** Unregisters the stop of the maintenance from the stores' close (`Stores.beforeClose`). */
  private unhookMaintenance: (() => void) | undefined;
  /** The queues `enqueue({ queue })` may name (docs/queues.md). */
  readonly queues: QueueRegistry;
  /**
   * The shares of the steps that declared a destination (`ctx.step(name, fn, { destination })`),
   * and their capacities, changed at any time (docs/queues.md#destination-shares).
   * @example
   * runtime.destinations.setDestinationCapacity('api.example.com', 4);
   */
  readonly destinations: DestinationShares;
  /** The schedules the leader supervisor fires (docs/schedules.md). */
  readonly schedules: ScheduleRegistry;
  /** The fan-out stores by shard name: the runtime's own as `HOME_SHARD`, then `createRuntime({ shards })`. */
  readonly fanOutShards: Readonly<Record<string, FanOutStore | undefined>>;

  /**
   * @param options see {@link RuntimeOptions}
   * @param client set by `createClient` only: how a signal is handed to the nodes that run work
   */
  constructor(options: RuntimeOptions, client?: Pick<FeatureDeps, 'handOffSignal'>) {
    this.stores = options.stores;
    this.registry = new WorkflowRegistry(options.workflows);
    const errors = [...checkedErrorClasses(options.errors ?? [], 'createRuntime')];
    for (const workflow of options.workflows) errors.push(...(workflow.errors ?? []));
    this.codec = new Codec(new ErrorClassRegistry(errors, 'createRuntime'));
    this.clock = options.clock ?? Date.now;
    this.maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
    this.nodeId = options.nodeId ?? newId();
    assertName(this.nodeId, 'createRuntime options', 'nodeId');
    this.onError = options.onError ?? ((error, context) => console.error(`skein: ${context}:`, error));
    this.wakeTimers = new WakeTimers(this.clock, (executionId) => this.wake(executionId), this.onError);
    this.leaseOwner = options.lease?.owner ?? this.nodeId;
    assertName(this.leaseOwner, 'createRuntime options', 'lease.owner');
    this.fanOutShards = fanOutShardsOf(this.stores, options.shards);
    const maintenance = parseWith<MaintenanceOptions | false | undefined>(
      maintenanceOptionsSchema.optional(),
      options.maintenance,
      'createRuntime options',
      'maintenance',
    );
    const maintains = maintenance !== false && options.workflows.length > 0;
    // Maintenance takes over runs whose lease expired, so its runtime keeps leases of its own.
    const leaseTtlMs =
      options.lease === undefined && !maintains
        ? undefined
        : (optionalPositiveMs(options.lease?.ttlMs, 'createRuntime options', 'lease.ttlMs') ??
          DEFAULT_LEASE_TTL_MS);
    this.leaseTtlMs = leaseTtlMs;
    const leases =
      leaseTtlMs === undefined
        ? undefined
        : new ExecutionLeases({
            leases: this.stores.leases,
            events: this.stores.events,
            owner: this.leaseOwner,
            ttlMs: leaseTtlMs,
            clock: this.clock,
            onError: this.onError,
          });
    this.observers =
      options.observers === undefined || options.observers.length === 0
        ? undefined
        : new Observers([...options.observers], this.onError);
    const childRecheckMs =
      optionalPositiveMs(options.childRecheckMs, 'createRuntime options', 'childRecheckMs') ?? 60_000;
    this.features = {
      ...this.featureDeps(childRecheckMs, maxPendingSignalsOf(options)),
      ...client,
    };
    this.destinations = new DestinationShares(options.destinations);
    this.queues = new QueueRegistry(options.queues ?? []);
    if (options.queues !== undefined && options.queues.length > 0) queueStoreOf(this.stores, 'createRuntime');
    this.schedules = new ScheduleRegistry(options.schedules ?? []);
    for (const schedule of this.schedules.all()) {
      scheduleStoreOf(this.stores, 'createRuntime');
      this.registry.get(schedule.workflow.name, schedule.workflow.version);
    }
    const outbox = options.outbox === true;
    if (options.outbox !== undefined && typeof options.outbox !== 'boolean')
      throw new InvalidInputError('createRuntime options', [
        { path: 'outbox', message: `must be a boolean, got ${typeof options.outbox}` },
      ]);
    if (outbox && this.stores.outbox === undefined)
      throw new InvalidInputError('createRuntime options', [
        { path: 'outbox', message: 'is true, but the stores have no outbox (stores.outbox)' },
      ]);
    const deadlineWatch = new DeadlineWatch(this.clock, (id) => this.enforceDeadline(id), this.onError);
    this.lifecycle = new RunLifecycle({
      stores: this.stores,
      registry: this.registry,
      codec: this.codec,
      clock: this.clock,
      maxPayloadBytes: this.maxPayloadBytes,
      snapshotEvery: options.snapshotEvery ?? 100,
      onError: this.onError,
      tenant: storesTenant(options.stores),
      observers: this.observers,
      outbox,
      outboxHeaders: checkOutboxHeadersOption(options),
      leases,
      wakeTimers: this.wakeTimers,
      queues: this.queues,
      queuedResume: this.queuedResume(),
      destinations: this.destinations,
      features: this.features,
      runFeatures: runFeatures(this.features),
      fanOut: fanOutDepsOf(this.fanOutShards, this.leaseOwner, this.clock),
      closed: () => this.closed,
      maxResident: maxResidentOf(options.cache),
      loadState: (id, snapshots) => loadState(this.stores, id, this.codec, { snapshots }),
      foldLog: (events) => foldLog(events, this.codec),
      watchDeadline: (state) => deadlineWatch.watch(state),
    });
    if (maintains) this.startMaintenance(maintenance ?? {});
  }

  private startMaintenance(options: MaintenanceOptions): void {
    this.maintenance = new Maintenance(
      {
        stores: this.stores,
        owner: this.leaseOwner,
        ttlMs: this.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS,
        clock: this.clock,
        onError: this.onError,
        runs: (name) => this.registry.has(name),
        workflows: () => this.registry.workflowNames(),
        running: (id) => this.lifecycle.active.has(id) || this.features.handingOver.has(id),
        runOf: (id) => this.lifecycle.active.get(id),
        execute: ({ executionId, workflow }) => {
          this.assertOpen();
          return this.lifecycle.execute({ executionId, workflow }, {});
        },
        wake: (id) => this.wake(id, { claimed: true }),
      },
      options,
    );
    // Closing the stores before this runtime stops the maintenance first (and waits for the
    // runs it started), so no pass meets a closed connection.
    this.unhookMaintenance = this.stores.beforeClose?.(() => this.endMaintenance({ waitForRuns: true }));
    this.maintenance.start();
  }

  private async endMaintenance(options: { waitForRuns: boolean }): Promise<void> {
    const maintenance = this.maintenance;
    this.maintenance = undefined;
    this.unhookMaintenance?.();
    this.unhookMaintenance = undefined;
    await maintenance?.stop(options);
  }

  /**
   * Run one pass of the in-process maintenance now (due timers, pending work, expired
   * leases), or resolve with nothing done when it is off. The passes run by themselves; this
   * is for a start-up script that wants to know what was picked up.
   */
  async maintain(): Promise<MaintenancePass | null> {
    return this.maintenance === undefined ? null : this.maintenance.runOnce();
  }

  /**
   * Turn the in-process maintenance off for good (a `Supervisor` does so when given this
   * runtime). Resolves once the pass in progress has ended; runs it started go on.
   */
  async stopMaintenance(): Promise<void> {
    await this.endMaintenance({ waitForRuns: false });
  }

  /** The registered definition of `workflow` at `version` (default: newest). */
  workflow(name: string, version?: number): AnyWorkflow {
    return this.registry.get(name, version);
  }

  /**
   * Start an execution and run it here, now. Resolves once seq 0 is durable; the run goes on
   * in the background (await `handle.result()`). The input has the workflow's input type, or
   * is `unknown` (untrusted data such as parsed JSON): the schema validates it either way
   * before anything is written.
   */
  start<In, Out, Raw, M extends WorkflowMessages>(
    workflow: WorkflowDefinition<In, Out, Raw, M>,
    input: Raw,
    options?: StartOptions,
  ): Promise<WorkflowHandle<Out, M>>;
  start<In, Out, Raw, M extends WorkflowMessages, I>(
    workflow: WorkflowDefinition<In, Out, Raw, M>,
    input: UntrustedInput<I>,
    options?: StartOptions,
  ): Promise<WorkflowHandle<Out, M>>;
  async start(workflow: AnyWorkflow, input: unknown, options: StartOptions = {}): Promise<WorkflowHandle> {
    return this.begin(workflow, input, options, { run: true });
  }

  /**
   * Write seq 0 and leave the execution `pending` for any node's supervisor to run. With a
   * `queue`, the queue's item is written first and supervisors run it within the queue's
   * limits; a `deduplicationId` whose execution is not finished yet returns that execution's
   * handle (docs/queues.md). The input is typed or `unknown`, as for `start`.
   * @example
   * await runtime.enqueue(send, input, { queue: emails, partitionKey: tenantId, deduplicationId: 'x' });
   */
  enqueue<In, Out, Raw, M extends WorkflowMessages>(
    workflow: WorkflowDefinition<In, Out, Raw, M>,
    input: Raw,
    options?: EnqueueOptions,
  ): Promise<WorkflowHandle<Out, M>>;
  enqueue<In, Out, Raw, M extends WorkflowMessages, I>(
    workflow: WorkflowDefinition<In, Out, Raw, M>,
    input: UntrustedInput<I>,
    options?: EnqueueOptions,
  ): Promise<WorkflowHandle<Out, M>>;
  async enqueue(
    workflow: AnyWorkflow,
    input: unknown,
    options: EnqueueOptions = {},
  ): Promise<WorkflowHandle> {
    if (usesQueue(options)) return this.enqueueQueued(workflow, input, options);
    return this.begin(workflow, input, options, { run: false });
  }

  /** `enqueue` into a queue: the item (or the first of a duplicate), then seq 0. */
  private async enqueueQueued(
    workflow: AnyWorkflow,
    input: unknown,
    options: EnqueueOptions,
  ): Promise<WorkflowHandle> {
    const executionId = this.prepareStart(workflow, options);
    const definition = this.registry.get(workflow.name, workflow.version);
    const deps = {
      stores: this.stores,
      queues: this.queues,
      codec: this.codec,
      clock: this.clock,
      maxPayloadBytes: this.maxPayloadBytes,
    };
    const deadline = deadlineOf(options, this.clock(), 'enqueue options');
    const enqueued = await enqueueItem(deps, definition, input, executionId, options);
    if (enqueued.created) {
      if (deadline !== undefined) await scheduleDeadline(this.stores.timers, executionId, deadline);
      await this.lifecycle.bootstrapWithRetry(definition, executionId, input, {
        run: false,
        deadline,
        queue: enqueued.place,
      });
    } else await this.startQueued(enqueued.executionId);
    return this.handle(enqueued.executionId);
  }

  /**
   * Write seq 0 of a queue item whose enqueuer has not (yet) written it, from the item itself
   * (a duplicate enqueue met the first one's item before its seq 0); nothing when it exists.
   */
  private async startQueued(executionId: string): Promise<void> {
    if ((await this.stores.events.getExecution(executionId)) !== null) return;
    const item = await queueStoreOf(this.stores, 'startQueued').get(executionId);
    if (item === null || !this.registry.has(item.workflow, item.version)) return;
    const definition = this.registry.get(item.workflow, item.version);
    await this.lifecycle.bootstrapWithRetry(definition, executionId, this.codec.decode(item.input), {
      run: false,
      queue: { queue: item.queue, partitionKey: item.partitionKey, priority: item.priority },
    });
  }

  /**
   * Start `workflow` with `signal` delivered by the same append as seq 0, or, when the
   * execution exists, send the signal to it as `runtime.signal` does (adr/0064). Atomic: racing
   * calls start it once and every signal arrives; a crash leaves it either not started or
   * started with the signal. Everything (input, options, the signal's name and payload by the
   * declared schema) is checked before anything is written; an ended execution refuses the
   * signal (`ExecutionFinishedError`). Runs the body here, like `start` (on a client, it is
   * left `pending` for the nodes, like `client.start`).
   * @example
   * const cart = await runtime.signalWithStart(shop, { owner: 'ada' }, { name: 'add', payload: 'apple' },
   *   { executionId: 'cart-ada' });
   */
  signalWithStart<In, Out, Raw, M extends WorkflowMessages, K extends SignalName<M>>(
    workflow: WorkflowDefinition<In, Out, Raw, M>,
    input: Raw,
    signal: StartSignal<M, K>,
    options?: StartOptions,
  ): Promise<WorkflowHandle<Out, M>>;
  async signalWithStart(
    workflow: AnyWorkflow,
    input: unknown,
    signal: StartSignal,
    options: StartOptions = {},
  ): Promise<WorkflowHandle> {
    return this.begin(workflow, input, options, {
      run: this.features.handOffSignal === undefined,
      signal: signal ?? {},
    });
  }

  /** `signalWithStart` of an execution that exists: its inbox, unless seq 0 carries this very signal. */
  private async signalExisting(executionId: string, carried: CarriedSignal, payload: unknown): Promise<void> {
    const state = await this.loadState(executionId);
    if (state?.startSignals?.some((signal) => signal.signalId === carried.signalId)) return;
    await sendSignal(this.features, executionId, carried.name, payload, { signalId: carried.signalId });
  }

  /**
   * Seq 0 of `executionId`, with `deadline`'s timer row written before it (adr/0065): the input
   * is checked first, so a refused one leaves no row, and a start that lost removes its own.
   */
  private async bootstrapWithDeadline(
    definition: AnyWorkflow,
    executionId: string,
    input: unknown,
    how: Omit<BootstrapOptions, 'deadline'>,
    deadline: DeadlineRecord | undefined,
  ): Promise<Bootstrapped> {
    if (deadline === undefined) return this.lifecycle.bootstrapWithRetry(definition, executionId, input, how);
    parseWith(definition.input, input, `input of workflow "${definition.name}"`, 'input');
    await scheduleDeadline(this.stores.timers, executionId, deadline);
    const begun = await this.lifecycle.bootstrapWithRetry(definition, executionId, input, {
      ...how,
      deadline,
    });
    if (begun === 'exists') await this.stores.timers.complete(deadline.timerId);
    return begun;
  }

  /** `start` (run here when `run`), `enqueue` and `signalWithStart`: seq 0, then a handle. */
  private async begin(
    workflow: AnyWorkflow,
    input: unknown,
    options: StartOptions,
    { run, signal }: { run: boolean; signal?: StartSignal },
  ): Promise<WorkflowHandle> {
    const executionId = this.prepareStart(workflow, options);
    const definition = this.registry.get(workflow.name, workflow.version);
    const carried =
      signal === undefined
        ? undefined
        : carriedSignalOf(definition, executionId, signal, this.clock(), this.maxPayloadBytes);
    const deadline = deadlineOf(options, this.clock(), run ? 'start options' : 'enqueue options');
    const signals = carried === undefined ? {} : { signals: [carried] };
    const begun = await this.bootstrapWithDeadline(
      definition,
      executionId,
      input,
      { run, ...signals },
      deadline,
    );
    if (begun === 'exists' && carried !== undefined)
      await this.signalExisting(executionId, carried, signal?.payload);
    if (begun === 'exists' && options.strict === true)
      await this.assertSameInput(definition, executionId, input);
    // The run goes on in the background, with no caller to throw to: a store error (or any
    // other) there goes to onError, and the execution is left for recovery (adr/0033).
    if (run && begun !== 'exists')
      begun.outcome.catch((error: unknown) => this.onError(error, `run of execution "${executionId}"`));
    return this.handle(executionId);
  }

  /** A strict start of an existing id: its recorded input must be the one given (adr/0044). */
  private async assertSameInput(definition: AnyWorkflow, executionId: string, input: unknown): Promise<void> {
    const parsed = parseWith(definition.input, input, `input of workflow "${definition.name}"`, 'input');
    const [first] = await this.stores.events.read(executionId, 0, 1);
    if (first === undefined) return; // the start that won seq 0 is not durable yet: nothing to compare
    const recorded = this.codec.decode<StartedPayload>(first.payload).input;
    if (!sameRecordedValue(this.codec.encode(recorded), this.codec.encode(parsed)))
      throw new ExecutionInputMismatchError(executionId, definition.name);
  }

  /**
   * Fire the due times of every registered schedule that passed by `now` (the leader
   * `Supervisor` calls it each tick): one execution per due time, whichever nodes call it.
   * Resolves with the ids of the executions it enqueued; per-schedule errors go to `onError`.
   */
  async fireSchedules(now: number = this.clock()): Promise<string[]> {
    this.assertOpen();
    const store = scheduleStoreOf(this.stores, 'fireSchedules');
    const deps = {
      schedules: store,
      events: this.stores.events,
      enqueue: async (schedule: { workflow: AnyWorkflow; input: unknown }, executionId: string) => {
        await this.enqueue(schedule.workflow, schedule.input, { executionId });
      },
    };
    const fired: string[] = [];
    for (const schedule of this.schedules.all()) {
      try {
        fired.push(...(await fireSchedule(deps, schedule, now)));
      } catch (error) {
        this.onError(error, `schedule "${schedule.name}"`);
      }
    }
    return fired;
  }

  /** Pause a schedule on every node: no due time fires until `resumeSchedule`. */
  async pauseSchedule(name: string): Promise<ScheduleState> {
    return setPaused(
      scheduleStoreOf(this.stores, 'pauseSchedule'),
      this.schedules.get(name),
      true,
      this.clock(),
    );
  }

  /** Resume a paused schedule; the due times that passed while it was paused do not fire. */
  async resumeSchedule(name: string): Promise<ScheduleState> {
    return setPaused(
      scheduleStoreOf(this.stores, 'resumeSchedule'),
      this.schedules.get(name),
      false,
      this.clock(),
    );
  }

  /** Where a schedule stands: its next due time, whether it is paused, the last execution it started. */
  async scheduleState(name: string): Promise<ScheduleState | null> {
    return stateOf(scheduleStoreOf(this.stores, 'scheduleState'), this.schedules.get(name), this.clock());
  }

  /**
   * Execute (or continue) an execution and resolve with its state once it is terminal or
   * suspended. Idempotent: a terminal execution is returned as it is, and nothing is written.
   */
  execute(request: ExecuteRequest, options: ExecuteOptions = {}): Promise<ExecutionState> {
    // Not an async function: its frame would stay alive, waiting, for the whole execution
    // (adr/0097). A refusal still rejects rather than throws.
    let parsed: ExecuteRequest;
    try {
      this.assertOpen();
      parsed = parseWith(executeRequestSchema, request, 'execute request', 'request');
    } catch (error) {
      return Promise.reject(error);
    }
    // The maintenance is taking this one over already: a second takeover here would fence it out.
    const taking = this.maintenance?.working(parsed.executionId);
    if (taking !== undefined) return taking.then(() => this.lifecycle.execute(parsed, options));
    return this.lifecycle.execute(parsed, options);
  }

  /**
   * End an execution with `EXECUTION_DEAD_LETTERED` and `reason`, under a freshly acquired
   * fence. Reads only the execution index, so it lands even when the log cannot be replayed;
   * releasing the lease and completing timers afterwards is best-effort (errors go to
   * `onError`). Resolves true when this call ended it, false when it was already terminal.
   */
  async deadLetter(executionId: string, reason: string): Promise<boolean> {
    const id = parseWith(executionIdSchema, executionId, 'executionId', 'executionId');
    const why = parseWith(z.string().min(1), reason, 'dead-letter reason', 'reason');
    const ended = await deadLetterExecution(
      { stores: this.stores, clock: this.clock, leaseOwner: this.leaseOwner, onError: this.onError },
      id,
      why,
    );
    if (ended && this.observers !== undefined) await this.observeDeadLetter(id, why);
    return ended;
  }

  /** Tell the observers of a dead letter, from seq 0 and the last event (the log is not replayed). */
  private async observeDeadLetter(executionId: string, reason: string): Promise<void> {
    try {
      const summary = await this.stores.events.getExecution(executionId);
      const [first] = await this.stores.events.read(executionId, 0, 1);
      if (summary === null || first === undefined) return;
      const [last] = await this.stores.events.read(executionId, summary.sequence, 1);
      const { version } = this.codec.decode<StartedPayload>(first.payload);
      const at = last?.recordedAt ?? summary.updatedAt;
      this.observers?.deadLettered(
        { executionId, workflow: summary.workflow, version, fence: last?.fence ?? 0, at },
        first.recordedAt,
        reason,
      );
    } catch (error) {
      this.onError(error, `observers of the dead letter of execution "${executionId}"`);
    }
  }

  /**
   * Resume a suspended execution whose timers are due. Unless `claimed` (the caller already
   * claimed the due timers, as a supervisor does), the due timers are claimed first, and an
   * execution whose timers another node claimed is left to that node.
   */
  async wake(executionId: string, options: { claimed?: boolean } = {}): Promise<ExecutionState | null> {
    assertExecutionId(executionId, 'wake');
    if (options.claimed !== true) await this.maintenance?.working(executionId);
    const current = (await this.lifecycle.resident.state(executionId)) ?? (await this.loadState(executionId));
    if (current !== null && (await enforceDeadline(this.deadlines(), current, this.clock())))
      return this.loadState(executionId);
    if (current !== null && isTerminalStatus(current.status)) {
      // The end's clean-up of its rows was lost to a crash: the row that is due now goes, and
      // the others with it, or each would be claimed again every claim TTL.
      const rows = await this.stores.timers.forExecution(executionId);
      await Promise.all(rows.map((row) => this.stores.timers.complete(row.timerId)));
      return current;
    }
    if (current === null || current.status !== 'suspended') return current;
    const now = this.clock();
    const due = current.timers.filter((timer) => timer.dueAt <= now);
    if (due.length === 0) return current;
    if (options.claimed !== true) {
      const claims = { now, owner: this.nodeId, claimTtlMs: TIMER_CLAIM_TTL_MS };
      const won = await Promise.all(due.map((timer) => this.stores.timers.claim(timer.timerId, claims)));
      if (!won.includes(true)) {
        // This runtime's maintenance claimed them: its resume is the one; report where it ended.
        const maintained = this.maintenance?.working(executionId);
        if (maintained === undefined) return current;
        await maintained;
        return (await this.loadState(executionId)) ?? current;
      }
    }
    return this.lifecycle.continueExecution(current);
  }

  /**
   * Resume a suspended execution when a signal it waits for is in its inbox or a child it
   * waits for has ended: what `runtime.signal` does on the sender's node, for a node that
   * heard of the signal another way (a supervisor's wake-up). Writes nothing otherwise.
   * Resolves true when this call resumed it; the run goes on in the background.
   */
  async resumeIfArrived(executionId: string): Promise<boolean> {
    this.assertOpen();
    const id = parseWith(executionIdSchema, executionId, 'executionId', 'executionId');
    return resumeIfArrived(this.features, id, 'a wake-up: a signal or child it waits for arrived');
  }

  /**
   * Send signal `name` with `payload` to an execution. Refuses before anything is written:
   * an unknown execution (`ExecutionNotFoundError`), an ended one (`ExecutionFinishedError`),
   * a name the workflow does not declare (`UnknownSignalError`), a payload failing the
   * declared schema (`InvalidInputError`) or over `maxPayloadBytes` (`PayloadTooLargeError`),
   * an inbox already holding `maxPendingSignals` (`SignalInboxFullError`).
   * An accepted signal waits in the inbox for `ctx.waitForSignal`; a suspended execution
   * waiting for it is woken here. A `signalId` this execution already had is a duplicate
   * (`{ accepted: false, duplicate: true }`): nothing is written and the first send stands.
   * Given the workflow first (`runtime.signal(order, 'order-42', 'approve', true)`), the name
   * and payload are also checked at compile time against its declared signals.
   * @example
   * await runtime.signal('order-42', 'approve', true);
   */
  signal<In, Out, Raw, M extends WorkflowMessages, K extends SignalName<M>>(
    workflow: WorkflowDefinition<In, Out, Raw, M>,
    executionId: string,
    name: K,
    payload: SignalInput<M, K>,
    options?: SignalOptions,
  ): Promise<SignalResult>;
  signal(executionId: string, name: string, payload: unknown, options?: SignalOptions): Promise<SignalResult>;
  async signal(...args: unknown[]): Promise<SignalResult> {
    this.assertOpen();
    // Given the workflow first, the compiler checked the name and payload; the runtime checks
    // them all the same, against the workflow the execution runs.
    const [executionId, name, payload, options] = isWorkflowDefinition(args[0]) ? args.slice(1) : args;
    return sendSignal(
      this.features,
      executionId as string,
      name as string,
      payload,
      (options ?? {}) as SignalOptions,
    );
  }

  /**
   * Send update `name` with `payload` and resolve with what the body's `ctx.onUpdate(name)`
   * handler returned (adr/0049). Refuses before anything is written like `signal`, and with
   * `UnknownUpdateError` for a name the workflow does not declare. The update is applied where
   * the body next waits and recorded with its result; a handler that throws rejects this with
   * `UpdateFailedError`. A repeated `updateId` returns the first result; `timeoutMs` bounds the
   * wait (`UpdateTimeoutError`, the update stays in the inbox). Given the workflow first
   * (`runtime.update(cart, 'cart-1', 'add', 'apple')`), the name and payload are also checked at
   * compile time against its declared updates; `R` is the handler's result type.
   * @example
   * const count = await runtime.update('cart-1', 'add', 'apple', { updateId: requestId });
   */
  update<In, Out, Raw, M extends WorkflowMessages, K extends UpdateName<M>, R = unknown>(
    workflow: WorkflowDefinition<In, Out, Raw, M>,
    executionId: string,
    name: K,
    payload: UpdateInput<M, K>,
    options?: UpdateOptions,
  ): Promise<R>;
  update<R = unknown>(
    executionId: string,
    name: string,
    payload: unknown,
    options?: UpdateOptions,
  ): Promise<R>;
  async update(...args: unknown[]): Promise<unknown> {
    this.assertOpen();
    // Given the workflow first, the compiler checked the name and payload; the runtime checks
    // them all the same, against the workflow the execution runs.
    const [executionId, name, payload, options] = isWorkflowDefinition(args[0]) ? args.slice(1) : args;
    return sendUpdate(
      this.features,
      executionId as string,
      name as string,
      payload,
      (options ?? {}) as UpdateOptions,
    );
  }

  /**
   * The latest value the execution published under `key` with `ctx.setEvent`; waits for the
   * first up to `timeoutMs` (default 60 000) and resolves `undefined` when none came by then
   * or the execution ended without one (adr/0050).
   * @example
   * const progress = await runtime.getEvent('job-1', 'progress', { timeoutMs: 5_000 });
   */
  async getEvent<T = unknown>(
    executionId: string,
    key: string,
    options: GetEventOptions = {},
  ): Promise<T | undefined> {
    return (await getEvent((id) => this.loadState(id), executionId, key, options)) as T | undefined;
  }

  /**
   * The durable stream `name` of an execution, from offset `from` (default 0): an async iterable
   * of `{ offset, value }` in order that follows new writes live and ends when the execution
   * ends (adr/0051). Refuses a bad request here, at the call.
   * @example
   * for await (const { offset, value } of runtime.readStream('chat-1', 'tokens', { from })) show(value);
   */
  readStream<T = unknown>(
    executionId: string,
    name: string,
    options: ReadStreamOptions = {},
  ): AsyncIterable<StreamEntry & { value: T }> {
    return readStream<T>(this.stores.events, this.codec, executionId, name, options);
  }

  /**
   * Cancel an execution: take it over, record `CANCEL_REQUESTED`, and run it so the workflow
   * sees `CancelledError` at its next context call (cleanup in `finally` still runs), ending
   * `EXECUTION_CANCELLED`; unsettled children are cancelled too. Any id of a continue-as-new
   * chain cancels its current run (adr/0063). Resolves once the request is durable. A finished
   * execution is left alone: `{ cancelled: false, status }`.
   */
  async cancel(executionId: string, reason: string): Promise<CancelResult> {
    this.assertOpen();
    const id = parseWith(executionIdSchema, executionId, 'executionId', 'executionId');
    const why = parseWith(z.string().min(1), reason, 'cancel reason', 'reason');
    return this.requestCancel(id, why);
  }

  /** `cancel` of a checked id and reason; `deadline` when the execution's deadline asks for it. */
  private async requestCancel(id: string, why: string, deadline?: number): Promise<CancelResult> {
    // The runs in progress here of the chain's current run (adr/0063): their running steps see
    // the cancellation (StepInfo.signal).
    const named = await this.loadState(id);
    const runId = named === null ? id : (await currentRun(this.features, named)).executionId;
    const holders = this.lifecycle.bodies.of(runId);
    const origin = deadline === undefined ? {} : { deadline };
    const result = await cancelExecution(this.features, id, why, origin);
    if (result.cancelled && result.alreadyRequested !== true)
      for (const holder of holders) holder.abortSteps(cancelledErrorOf(id, { reason: why, ...origin }));
    return result;
  }

  /** Cancel `executionId` when its deadline passed (the in-process watch of a run here). */
  private async enforceDeadline(executionId: string): Promise<void> {
    if (this.closed) return;
    const current = await this.loadState(executionId);
    if (current !== null) await enforceDeadline(this.deadlines(), current, this.clock());
  }

  /** What enforcing a deadline needs (deadlines.ts). */
  private deadlines(): DeadlineDeps {
    return {
      timers: this.stores.timers,
      cancel: (id, reason, deadline) => this.requestCancel(id, reason, deadline),
    };
  }

  /**
   * Re-drive a failed or dead-lettered execution from its log under a new fence (adr/0067):
   * `EXECUTION_REDRIVEN` records the resume, the failed steps the body had not gone past run
   * again with a fresh retry budget, and every completed step returns its recorded output.
   * Refuses any other status with `ExecutionNotResumableError`, writing nothing. Resolves once
   * the resume is durable; the run goes on in the background.
   * @example
   * await runtime.resume('order-42', { reason: 'card service fixed' });
   * await runtime.handle('order-42').result();
   */
  async resume(executionId: string, options?: ResumeOptions): Promise<ResumeResult> {
    this.assertOpen();
    const observers = this.observers;
    return resumeExecution(
      this.features,
      executionId,
      options,
      observers === undefined ? undefined : (state, resumed) => observers.redriven(state, resumed),
    );
  }

  /**
   * A new execution of the source's workflow and input that keeps the recorded outcomes of
   * the calls before step `fromStep` and runs on from there (adr/0067); the source is only
   * read. Refuses, writing nothing, an unknown step (`ForkRefusedError`), a call before it not
   * settled, and an `executionId` that exists (`ExecutionAlreadyExistsError`).
   * @example
   * const fork = await runtime.fork('order-42', { fromStep: 'charge', executionId: 'order-42-retry' });
   * await fork.result();
   */
  async fork(executionId: string, options: ForkOptions): Promise<WorkflowHandle> {
    this.assertOpen();
    return this.handle(await forkExecution(this.features, executionId, options));
  }

  /**
   * A page of executions ordered by id, filtered by status and workflow; pass `nextCursor`
   * back as `cursor` for the next page.
   * @example
   * const { items, nextCursor } = await runtime.list({ status: 'suspended', limit: 50 });
   */
  async list(query: ListQuery = {}): Promise<ListPage> {
    return listExecutions(this.stores.events, this.registry, query, this.stores.blockages);
  }

  /** Ids of the executions with a run in progress in this runtime (a suspended one has none). */
  activeExecutions(): string[] {
    return [...this.lifecycle.active.keys()];
  }

  /**
   * A handle on an execution (it need not exist yet): `result()`, `state()`, `signal()` and
   * `update()`. Given the workflow, all are typed by it (its output, its declared signals and updates).
   * @example
   * const handle = runtime.handle(order, 'order-42');
   * await handle.signal('approve', true);
   * const output = await handle.result();
   */
  handle<In, Out, Raw, M extends WorkflowMessages>(
    workflow: WorkflowDefinition<In, Out, Raw, M>,
    executionId: string,
  ): WorkflowHandle<Out, M>;
  handle<Out = unknown>(executionId: string): WorkflowHandle<Out>;
  handle(first: string | AnyWorkflow, second?: string): WorkflowHandle {
    return handleOn(this, isWorkflowDefinition(first) ? second : first, 'handle');
  }

  /** The folded state of an execution, from its newest snapshot and the events after it; null if none. */
  async loadState(executionId: string): Promise<ExecutionState | null> {
    assertExecutionId(executionId, 'loadState');
    const [state, blockage] = await Promise.all([
      loadState(this.stores, executionId, this.codec),
      this.stores.blockages?.get(executionId),
    ]);
    // A blockage shows while the log still ends where the failed run found it (adr/0058).
    if (state === null || blockage === undefined || blockage === null || !blockageStands(blockage, state))
      return state;
    return { ...state, blocked: blockedView(blockage) };
  }

  /**
   * Every result of a fan-out of this runtime's store, in index order, read a page per shard
   * at a time: `{ index, status, output | error, attempt }` (docs/fan-out.md#settlement).
   * @example
   * for await (const r of runtime.fanOutResults('eval-1:fanout:cases')) console.log(r.index, r.output);
   */
  fanOutResults(fanOutId: string, options: { pageSize?: number } = {}): AsyncGenerator<FanOutResult> {
    return fanOutResultsOf(this.fanOutShards, this.codec, fanOutId, options.pageSize);
  }

  /** The log of an execution, decoded, in seq order. */
  async history(executionId: string): Promise<Envelope[]> {
    assertExecutionId(executionId, 'history');
    return readHistory(this.stores.events, executionId, this.codec);
  }

  /**
   * Wait for the execution to end; resolve with its output or reject with `ExecutionFailedError`.
   * With `timeoutMs`, reject with `ResultTimeoutError` when it has not ended by then (the
   * execution goes on untouched). A number is `pollMs`, the first poll interval (default: 50).
   * @example
   * const output = await runtime.result('order-42', { timeoutMs: 5_000 });
   */
  async result<Out = unknown>(executionId: string, options: ResultOptions | number = {}): Promise<Out> {
    assertExecutionId(executionId, 'result');
    const { pollMs, timeoutMs } = resultOptions(options);
    const status = async () => (await this.loadState(executionId))?.status ?? 'not started';
    return withDeadline(executionId, timeoutMs, status, (stopped) =>
      this.awaitEnd<Out>(executionId, pollMs, stopped),
    );
  }

  private async awaitEnd<Out>(executionId: string, pollMs: number, stopped: () => boolean): Promise<Out> {
    let current = executionId;
    let state = await this.settledState(current);
    let delay = pollMs;
    while (state === null || !isTerminalStatus(state.status) || state.continuedAs !== undefined) {
      if (stopped()) return undefined as Out; // the caller was told of the timeout already
      // A continued execution's result is its chain's (adr/0063): follow it to the current run.
      if (state?.continuedAs !== undefined) {
        current = state.continuedAs;
        state = await this.settledState(current);
        continue;
      }
      if (state === null && !this.lifecycle.active.has(current)) {
        const exists = await this.stores.events.getExecution(current);
        if (exists === null) throw new ExecutionNotFoundError(current);
      }
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 1000);
      state = await this.settledState(current);
    }
    if (state.status === 'completed') return state.output as Out;
    throw new ExecutionFailedError(current, state.status, { cause: state.error });
  }

  /**
   * Stop wake-up timers and wait for runs in progress to settle, and for the runs they start
   * meanwhile (children). A closed runtime resumes nothing. The stores stay open.
   */
  async close(): Promise<void> {
    await this.endMaintenance({ waitForRuns: true });
    this.closed = true;
    this.wakeTimers.clear();
    this.lifecycle.resident.clear();
    while (this.lifecycle.active.size > 0) await Promise.allSettled([...this.lifecycle.active.values()]);
  }

  private async settledState(executionId: string): Promise<ExecutionState | null> {
    const running = this.lifecycle.active.get(executionId);
    if (running !== undefined) {
      // A run that failed here (fenced out, a store error) says nothing about the execution's
      // end: that error went to whoever started the run, and the log below is the truth.
      const outcome = await running.catch(() => undefined);
      if (outcome?.kind === 'terminal') return outcome.state;
    }
    return this.loadState(executionId);
  }

  /**
   * Validate a start and pick its id. No read: the start goes straight for seq 0, and an id
   * that exists is found by that append failing (`bootstrap` returns 'exists' for the same
   * workflow and throws `ExecutionAlreadyExistsError` for another), so a start costs one append.
   */
  private prepareStart(workflow: AnyWorkflow, options: StartOptions): string {
    this.assertOpen();
    this.registry.get(workflow.name, workflow.version);
    if (options.strict !== undefined) parseWith(startOptionsSchema, options, 'start options', 'options');
    return options.executionId === undefined
      ? newId()
      : parseWith(executionIdSchema, options.executionId, 'executionId', 'executionId');
  }

  /** What signals, children and cancellation need from this runtime (see signal-child-deps.ts). */
  private featureDeps(childRecheckMs: number, maxPendingSignals: number): FeatureDeps {
    return {
      stores: this.stores,
      registry: this.registry,
      clock: this.clock,
      maxPayloadBytes: this.maxPayloadBytes,
      childRecheckMs,
      maxPendingSignals,
      onError: this.onError,
      loadState: (id) => loadState(this.stores, id, this.codec),
      residentState: (id) => this.lifecycle.resident.unchanged(id),
      resumes: new Map(),
      bodyRunning: (id) => this.lifecycle.bodies.has(id),
      closed: () => this.closed,
      takeOver: (current, fence, events) => this.lifecycle.takeOver(current, fence, events),
      startSuccessor: (definition, successorId, input, continuedFrom, parentId, queue) =>
        this.lifecycle.bootstrapWithRetry(definition, successorId, input, {
          run: false,
          continuedFrom,
          ...(parentId === undefined ? {} : { parentId }),
          ...(queue === undefined ? {} : { queue }),
        }),
      queueSuccessor: async (definition, successorId, input, queue) => {
        const now = this.clock();
        await queueStoreOf(this.stores, 'continueAsNew').enqueue({
          executionId: successorId,
          queue: queue.queue,
          partitionKey: queue.partitionKey ?? '',
          priority: queue.priority ?? 0,
          workflow: definition.name,
          version: definition.version,
          input: this.codec.encode(input),
          enqueuedAt: now,
          availableAt: now,
        });
      },
      startChild: (definition, childId, input, parentId, deadline) =>
        this.bootstrapWithDeadline(definition, childId, input, { run: true, parentId }, deadline),
      cancel: (id, reason) => this.cancel(id, reason),
      waitsForSlot: async (state) => !(await holdsSlot(this.queuedResume(), state)),
      ...handOverDeps(
        this.stores,
        () => this.leaseOwner,
        () => this.leaseTtlMs,
        this.clock,
      ),
    };
  }

  /** What resumes of queue executions need (queues/queued-resume.ts). */
  private queuedResume(): QueuedResumeDeps {
    return {
      stores: this.stores,
      codec: this.codec,
      owner: this.leaseOwner,
      clock: this.clock,
    };
  }

  private assertOpen(): void {
    if (this.closed) throw new RuntimeClosedError();
  }
}

/**
 * Create a runtime over a set of stores.
 * @example
 * const runtime = createRuntime({ stores: openSqliteStores({ path: './skein.db' }), workflows: [order] });
 * const handle = await runtime.start(order, { sku: 'a', qty: 1 }, { executionId: 'order-42' });
 * console.log(await handle.result());
 */
export function createRuntime(options: RuntimeOptions): Runtime {
  return new Runtime(options);
}
