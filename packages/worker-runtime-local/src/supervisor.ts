/**
 * The supervisor: the maintenance tick of durable supervision (docs/architecture.md#supervision). Run one on every
 * node. Each tick, every node claims unowned `pending` executions (up to its concurrency);
 * the leader (one node at a time, by a leader lease) also dead-letters poison work, fires due
 * timers and recovers executions whose lease expired (adr/0006).
 */
import {
  isSupersededRefusal,
  type Subscription,
  type Transport,
  type TransportMessage,
} from '@skein/worker-runtime';
import { type FanOutStore, InvalidInputError, type Runtime, type Stores } from '@skein/workflow-runtime';
import {
  backingOff,
  executionLeaseKey,
  leaseExpired,
  optionalPositiveMs,
  repeatsBlockage,
  SUPERVISOR_LEADER_KEY,
  SUPERVISOR_PRESENCE_KEY,
  walkExecutions,
} from '@skein/workflow-runtime/internal';
import {
  EXECUTION_PENDING_TOPIC,
  type ExecutionPendingPayload,
  type ExecutionSummary,
  type PendingTakeover,
  type RecoveredChunk,
} from '@skein/workflow-runtime/spi';
import { SupervisorTickError } from './errors.js';
import { QueueClaims } from './queue-claims.js';
import { SupervisorWakeups, type WakeupSource } from './supervisor-wakeups.js';
import { deadLetterReason, TickFailures } from './tick-failures.js';
import { adoptTraceContext, type TraceparentHook } from './trace-context.js';

/** Options of {@link Supervisor}. */
export interface SupervisorOptions {
  /** The runtime that runs the work; it must keep leases (`createRuntime({ lease: { ttlMs } })`). */
  runtime: Runtime;
  /** The stores of `runtime`. */
  stores: Stores;
  /** TTL of the leader lease and of this node's execution claims (default: the runtime's lease TTL). */
  leaseTtlMs?: number;
  /** Pause between ticks of `start()`; must be below `leaseTtlMs` (default: 1 000). */
  tickIntervalMs?: number;
  /** Executions this node runs at once from claims, and timers/recoveries per tick (default: 10). */
  concurrency?: number;
  /** Dead-letter an execution whose tick work keeps failing for longer than this (default: 300 000, 5 min). */
  tickFailureDeadlineMs?: number;
  /** Milliseconds since the epoch, for leases and the dead-letter deadline (default: `Date.now`). */
  clock?: () => number;
  /**
   * Key of the leader lease (default: `supervisor:leader`). A leader of another key also holds
   * the `supervisor:leading` lease, so runtimes' in-process maintenance stands aside for it.
   */
  leaderKey?: string;
  /**
   * Where the supervisor reports what it cannot throw to a caller (default: `console.error`):
   * each failed `start()` tick (`SupervisorTickError`, context `supervisor tick`), each
   * execution's failure in a tick (context `supervisor tick: execution "<id>"`), wake-up
   * subscription errors. Called synchronously; a throw from it goes to `console.error` and the
   * supervisor goes on. See docs/supervision.md#onerror.
   */
  onError?: (error: unknown, context: string) => void;
  /**
   * Notifications that cut the wait short (`stores.wakeups` of `@skein/store-postgres`): a new
   * timer triggers a tick at its due time, a new signal a resume of its execution by the
   * leader, a newly enqueued execution a tick on every node (which claims it). Polling every
   * `tickIntervalMs` goes on as the fallback (default: none, polling only).
   */
  wakeups?: WakeupSource;
  /**
   * A transport whose `execution.pending` messages (written by `enqueue` on a runtime with
   * `outbox: true`) this node consumes: each one heard is claimed and run at once, up to
   * `concurrency` (the consumer's prefetch). A claim that another node won is acked and
   * forgotten, not an error. Polling every `tickIntervalMs` goes on as the fallback
   * (default: none). See `docs/outbox.md`.
   */
  transport?: Transport;
  /**
   * Told the W3C trace context (`traceparent`, `tracestate`) an `execution.pending` message
   * heard through `transport` carried, before the run it starts; what it returns is called
   * when that run ends. Pass `CallerContexts.adopt` of `@skein/opentelemetry`, so the run's
   * spans continue the enqueuer's trace (default: none). See `docs/outbox.md#headers`.
   */
  onTraceparent?: TraceparentHook;
  /**
   * Fan-out shard stores whose expired chunks this node's leader recovers, besides
   * `stores.fanOuts` and the runtime's shards (`createRuntime({ shards })`) (default: none;
   * see docs/fan-out.md#recovery).
   */
  fanOutShards?: readonly FanOutStore[];
  /** Recoveries of one chunk before it fails (default: the store's, 5). */
  fanOutRecoveryLimit?: number;
}

/** Chunks one store recovers per tick, at most. */
const FAN_OUT_RECOVERY_BATCH = 100;

/** What one tick did. Errors of work started by an earlier tick are reported by the next. */
export interface TickReport {
  /** Whether this node held the leader lease and ran the leader's work. */
  leader: boolean;
  /**
   * Pending executions this node claimed, started at once or (a tick of `start()`, which
   * claims ahead of free slots) as slots free up.
   */
  claimed: string[];
  /** Executions whose lease expired, taken over. */
  recovered: string[];
  /** Due timers claimed and handed to `runtime.wake`. */
  timersFired: number;
  /** Executions dead-lettered for failing past `tickFailureDeadlineMs`. */
  deadLettered: string[];
  /** Executions the leader enqueued for due times of the runtime's schedules (docs/schedules.md). */
  scheduled: string[];
  /** Fan-out chunks whose lease expired, recovered by the leader (F8, docs/fan-out.md#recovery). */
  fanOutChunks: RecoveredChunk[];
  /** Per-execution errors; each execution's failure did not stop the tick. */
  errors: [executionId: string, error: unknown][];
}

/**
 * Durable supervision of every execution in `stores`.
 * @example
 * const runtime = createRuntime({ stores, workflows, lease: { ttlMs: 10_000 } });
 * const supervisor = new Supervisor({ runtime, stores, leaseTtlMs: 10_000, tickIntervalMs: 1_000 });
 * supervisor.start();
 * // ...
 * await supervisor.stop();
 */
export class Supervisor {
  private readonly runtime: Runtime;
  private readonly stores: Stores;
  private readonly ttlMs: number;
  private readonly intervalMs: number;
  private readonly concurrency: number;
  /** The last tick left pending work unclaimed for want of a free slot. */
  private backlog = false;
  /**
   * Pending executions claimed ahead of a free slot by a tick of `start()` (their leases held),
   * in claim order, each with the time after which it is given back instead of started.
   */
  private readonly ahead = new Map<string, { workflow: string; until: number; takeover?: PendingTakeover }>();
  /** Lease releases waiting for the one under way (`releaseBatched`). */
  private readonly releases: { id: string; done: () => void }[] = [];
  private releasing = false;
  /** Ended runs in `inFlight` whose leases are being given back: they hold no slot. */
  private releasingSlots = 0;
  private readonly deadlineMs: number;
  private readonly clock: () => number;
  private readonly leaderKey: string;
  private readonly fanOutStores: readonly FanOutStore[];
  private readonly fanOutRecoveryLimit: number | undefined;
  private readonly owner: string;
  private readonly onError: (error: unknown, context: string) => void;
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly failures = new TickFailures();
  private settledErrors: [string, unknown][] = [];
  private loop: Promise<void> | undefined;
  private wakeLoop: (() => void) | undefined;
  private stopping = false;
  private readonly wakeups: SupervisorWakeups | undefined;
  private subscribed: Promise<void> = Promise.resolve();
  private tickRequested = false;
  /** When the leader last walked the running executions (`performance.now()`). */
  private lastRecovery = Number.NEGATIVE_INFINITY;
  private leading = false;
  /** Settles once the runtime's own maintenance is off: this supervisor does that work now. */
  private readonly handedOver: Promise<void>;
  /** Claims of the runtime's queues, when its stores keep queues (docs/queues.md). */
  private readonly queueClaims: QueueClaims | undefined;
  private readonly transport: Transport | undefined;
  private readonly onTraceparent: TraceparentHook | undefined;
  private subscription: Subscription | undefined;
  /** Resolvers waiting for a free slot (a heard message waits for one before it claims). */
  private readonly slotWaiters: (() => void)[] = [];

  constructor(options: SupervisorOptions) {
    this.runtime = options.runtime;
    this.stores = options.stores;
    const where = 'Supervisor options';
    this.ttlMs =
      optionalPositiveMs(options.leaseTtlMs, where, 'leaseTtlMs') ?? options.runtime?.leaseTtlMs ?? 0;
    this.intervalMs = optionalPositiveMs(options.tickIntervalMs, where, 'tickIntervalMs') ?? 1_000;
    this.concurrency = options.concurrency ?? 10;
    this.deadlineMs =
      optionalPositiveMs(options.tickFailureDeadlineMs, where, 'tickFailureDeadlineMs') ?? 300_000;
    this.clock = options.clock ?? Date.now;
    this.leaderKey = options.leaderKey ?? SUPERVISOR_LEADER_KEY;
    const runtimeShards = Object.values(this.runtime?.fanOutShards ?? {}).filter(
      (store): store is FanOutStore => store !== undefined,
    );
    this.fanOutStores = [
      ...new Set([
        ...(this.stores.fanOuts === undefined ? [] : [this.stores.fanOuts]),
        ...runtimeShards,
        ...(options.fanOutShards ?? []),
      ]),
    ];
    this.fanOutRecoveryLimit = options.fanOutRecoveryLimit;
    this.onError = guarded(
      options.onError ?? ((error, context) => console.error(`skein: ${context}:`, error)),
    );
    validate({
      runtime: this.runtime,
      ttlMs: this.ttlMs,
      intervalMs: this.intervalMs,
      concurrency: this.concurrency,
      deadlineMs: this.deadlineMs,
      onTraceparent: options.onTraceparent,
    });
    this.owner = this.runtime.leaseOwner;
    this.handedOver = this.runtime.stopMaintenance();
    this.queueClaims =
      this.stores.queues === undefined
        ? undefined
        : new QueueClaims({
            runtime: this.runtime,
            queues: this.stores.queues,
            events: this.stores.events,
            owner: this.owner,
            ttlMs: this.ttlMs,
            concurrency: this.concurrency,
            clock: this.clock,
            inFlight: (id) => this.inFlight.has(id),
            launch: (id, phase, work) => this.launch(id, phase, work, { holdsLease: false }),
            onError: this.onError,
          });
    this.transport = options.transport;
    this.onTraceparent = options.onTraceparent;
    this.wakeups =
      options.wakeups === undefined
        ? undefined
        : new SupervisorWakeups(options.wakeups, {
            clock: this.clock,
            tickSoon: () => this.tickSoon(),
            signalArrived: (id) => this.signalArrived(id),
            onError: this.onError,
          });
  }

  /** Run one tick; see {@link TickReport}. Rejects with `SupervisorTickError` when the tick fails as a whole. */
  tick(): Promise<TickReport> {
    return this.tickOnce(false, false);
  }

  /**
   * One tick. A `requested` one (a wake-up, a freed slot; they come often under load) skips the
   * leader's walk over running executions, one lease read each, unless `tickIntervalMs` has
   * passed since the last walk: leases expire on the scale of their TTL, and the walk would
   * otherwise cost a round trip per running execution per wake-up. A tick of `start()`
   * (`claimAhead`) also claims up to `concurrency` pending executions beyond the free slots.
   */
  private async tickOnce(requested: boolean, claimAhead: boolean): Promise<TickReport> {
    const report: TickReport = {
      leader: false,
      claimed: [],
      recovered: [],
      timersFired: 0,
      deadLettered: [],
      scheduled: [],
      fanOutChunks: [],
      errors: this.settledErrors.splice(0),
    };
    await this.phase("turn the runtime's own maintenance off", report, () => this.handedOver);
    report.leader = await this.phase('claim the leader lease', report, () => this.lead());
    this.leading = report.leader;
    if (report.leader)
      await this.phase('dead-letter failing executions', report, () => this.deadLetter(report));
    await this.phase('list pending executions', report, () => this.claimPending(report, claimAhead));
    if (this.queueClaims !== undefined && this.runtime.queues.all().length > 0)
      report.claimed.push(
        ...(await this.phase('claim queue slots', report, () => this.queueClaims!.claim())),
      );
    if (!report.leader) return report;
    await this.phase('claim due timers', report, () => this.fireTimers(report));
    if (this.runtime.schedules.all().length > 0)
      report.scheduled = await this.phase('fire due schedules', report, () =>
        this.runtime.fireSchedules(this.clock()),
      );
    if (report.scheduled.length > 0) this.tickSoon(); // claim them at once
    if (requested && performance.now() - this.lastRecovery < this.intervalMs) return report;
    this.lastRecovery = performance.now();
    await this.phase('list running executions', report, () => this.recoverExpired(report));
    report.fanOutChunks = await this.phase('recover expired fan-out chunks', report, () =>
      this.recoverChunks(),
    );
    return report;
  }

  /**
   * Tick every `tickIntervalMs` until `stop()`, and sooner when a wake-up arrives; tick errors
   * go to `onError`.
   */
  start(): void {
    if (this.loop !== undefined) return;
    this.stopping = false;
    this.queueClaims?.resume();
    this.subscribed = this.listen();
    this.loop = this.run();
  }

  /**
   * Resolves once `start()` listens to the wake-up source (at once without one). A failed
   * subscription is reported to `onError` and resolves too: the supervisor keeps polling.
   */
  listening(): Promise<void> {
    return this.subscribed;
  }

  /** Stop ticking, wait for the work in flight, and give up the leader lease. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.queueClaims?.halt();
    this.wakeLoop?.();
    for (const wake of this.slotWaiters.splice(0)) wake();
    await this.loop;
    this.loop = undefined;
    await this.subscribed;
    await this.subscription?.close();
    this.subscription = undefined;
    await this.wakeups?.stop();
    for (const id of [...this.ahead.keys()]) this.giveBack(id);
    this.ahead.clear();
    await this.idle();
    this.queueClaims?.stop();
    await this.stores.leases.release(this.leaderKey, this.owner);
    if (this.leaderKey !== SUPERVISOR_LEADER_KEY)
      await this.stores.leases.release(SUPERVISOR_PRESENCE_KEY, this.owner);
  }

  /** Resolves once no work this supervisor started is in flight. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight.values()]);
  }

  private async run(): Promise<void> {
    let requested = false;
    while (!this.stopping) {
      this.tickRequested = false;
      try {
        const report = await this.tickOnce(requested, true);
        for (const [id, error] of report.errors) this.onError(error, `supervisor tick: execution "${id}"`);
      } catch (error) {
        this.onError(error, 'supervisor tick');
      }
      if (this.stopping) continue;
      requested = this.tickRequested;
      if (requested) continue;
      requested = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), this.intervalMs);
        this.wakeLoop = () => {
          clearTimeout(timer);
          resolve(true);
        };
      });
    }
  }

  private async listen(): Promise<void> {
    try {
      await this.wakeups?.start();
    } catch (error) {
      this.onError(error, 'supervisor wake-ups: subscribe (polling goes on)');
    }
    if (this.transport === undefined) return;
    try {
      this.subscription = await this.transport.consume(
        EXECUTION_PENDING_TOPIC,
        (message) => this.heard(message),
        {
          prefetch: this.concurrency,
        },
      );
    } catch (error) {
      this.onError(error, `supervisor: consume "${EXECUTION_PENDING_TOPIC}" (polling goes on)`);
    }
  }

  /**
   * An `execution.pending` message: wait for a free slot, claim the execution and run it.
   * Resolves (the message is acked) once the claim is taken, or once it is clear another
   * node has it or it is no longer pending: a lost race is not an error. A failing claim
   * rejects, and the transport hands the message out again.
   */
  private async heard({ payload, headers }: TransportMessage): Promise<'ack' | 'quarantine'> {
    let pending: ExecutionPendingPayload;
    try {
      pending = JSON.parse(payload) as ExecutionPendingPayload;
    } catch {
      return 'quarantine';
    }
    if (typeof pending?.executionId !== 'string' || typeof pending.workflow !== 'string') return 'quarantine';
    const id = pending.executionId;
    while (this.running >= this.concurrency && !this.stopping)
      await new Promise<void>((resolve) => this.slotWaiters.push(resolve));
    if (this.stopping) throw new Error('the supervisor is stopping: the message goes back to the transport');
    if (this.inFlight.has(id)) return 'ack';
    if (!(await this.claim(id, 'pending'))) return 'ack';
    if (this.inFlight.has(id)) return 'ack';
    const forget = adoptTraceContext(this.onTraceparent, id, headers, this.onError);
    this.launch(id, 'run of a pending execution heard through the transport', () =>
      this.runtime.execute({ executionId: id, workflow: pending.workflow }).finally(forget),
    );
    return 'ack';
  }

  /** A wake-up: tick now, or right after the tick in progress. */
  private tickSoon(): void {
    if (this.loop === undefined || this.stopping) return;
    this.tickRequested = true;
    this.wakeLoop?.();
  }

  /** A signal arrived: the leader resumes its execution if it waits for it (the sender's node usually has). */
  private signalArrived(id: string): void {
    if (!this.leading || this.loop === undefined || this.stopping || this.inFlight.has(id)) return;
    this.launch(id, 'wake-up for a signal', () => this.runtime.resumeIfArrived(id), { holdsLease: false });
  }

  /** Run a part of the tick; a throw there fails the whole tick. */
  private async phase<T>(name: string, report: TickReport, part: () => Promise<T>): Promise<T> {
    try {
      return await part();
    } catch (error) {
      throw new SupervisorTickError(name, report.errors, { cause: error });
    }
  }

  /** F8: every fan-out store this node supervises recovers its chunks whose lease expired. */
  private async recoverChunks(): Promise<RecoveredChunk[]> {
    const recovered: RecoveredChunk[] = [];
    for (const store of this.fanOutStores) {
      const options = { now: this.clock(), limit: FAN_OUT_RECOVERY_BATCH };
      const found = await store.recoverExpired(
        this.fanOutRecoveryLimit === undefined
          ? options
          : { ...options, recoveryLimit: this.fanOutRecoveryLimit },
      );
      recovered.push(...found);
    }
    return recovered;
  }

  /**
   * Claim (or renew) the leader lease. A leader of another key than the default also claims the
   * presence lease the runtimes' maintenance reads (adr/0093); another such leader may hold it,
   * which stands for this one too.
   */
  private async lead(): Promise<boolean> {
    const { leases } = this.stores;
    const leads = (await leases.claim(this.leaderKey, this.owner, this.ttlMs, this.clock())) !== null;
    if (leads && this.leaderKey !== SUPERVISOR_LEADER_KEY)
      await leases.claim(SUPERVISOR_PRESENCE_KEY, this.owner, this.ttlMs, this.clock());
    return leads;
  }

  private async deadLetter(report: TickReport): Promise<void> {
    for (const [id, failure] of this.failures.overdue(this.clock(), this.deadlineMs)) {
      if (this.inFlight.has(id)) continue;
      try {
        await this.runtime.deadLetter(id, deadLetterReason(id, failure, this.deadlineMs));
        this.failures.clear(id);
        report.deadLettered.push(id);
      } catch (error) {
        report.errors.push([id, error]);
      }
    }
  }

  /**
   * Claim pending executions up to the free slots and run them. Claims go out together, as
   * many as there are free slots (each is one round trip, the lease; the run's fold re-reads), so a
   * burst of enqueued work is taken at the pace of the store, not one execution at a time.
   * With `claimAhead`, up to `concurrency` more are claimed and wait in `ahead` for a slot:
   * a run that ends starts the next one at once instead of waiting for a tick's round trips.
   */
  private async claimPending(report: TickReport, claimAhead: boolean): Promise<void> {
    const limit = claimAhead ? 2 * this.concurrency : this.concurrency;
    let candidates: ExecutionSummary[] = [];
    const claimCandidates = async (): Promise<void> => {
      const queued = await this.queueClaims?.admitted(candidates.map((summary) => summary.executionId));
      const batch = queued === undefined ? candidates : candidates.filter((c) => !queued.has(c.executionId));
      candidates = [];
      const claimed = await this.claimLeases(
        batch.map(({ executionId: id }) => id),
        report,
      );
      const ours = batch.filter((_, i) => claimed[i] === true);
      const takeovers = await this.takeOver(
        ours.map(({ executionId: id }) => id),
        report,
      );
      const until = this.clock() + this.intervalMs;
      for (const { executionId: id, workflow } of ours) {
        const takeover = takeovers?.get(id);
        // Not pending any more (another node or caller moved it on), or the takeover failed.
        if (takeovers !== undefined && takeover === undefined) this.giveBack(id);
        else {
          this.ahead.set(id, takeover === undefined ? { workflow, until } : { workflow, until, takeover });
          report.claimed.push(id);
        }
      }
      this.startAhead();
    };
    for await (const summary of walkExecutions(this.stores.events, ['pending'])) {
      if (this.running + this.ahead.size + candidates.length >= limit) {
        await claimCandidates();
        if (this.running + this.ahead.size >= limit) {
          // More pending work than free slots: the first run to end asks for the next tick.
          this.backlog = true;
          return;
        }
      }
      if (this.inFlight.has(summary.executionId) || this.ahead.has(summary.executionId)) continue;
      candidates.push(summary);
    }
    await claimCandidates();
  }

  /**
   * Start claimed executions while slots are free, oldest claim first. One that waited past
   * its `until` (a tick interval: the slots are held by longer runs) is given back for a node
   * with room; one whose run another path started meanwhile is that run's.
   */
  private startAhead(): void {
    for (const [id, { workflow, until, takeover }] of this.ahead) {
      if (this.running >= this.concurrency || this.stopping) return;
      this.ahead.delete(id);
      if (this.inFlight.has(id)) continue;
      if (until < this.clock()) {
        this.giveBack(id);
        continue;
      }
      // The run's fold (of the takeover's log, or read now) is the re-read right before
      // acting: still pending, or it writes nothing.
      this.launch(id, 'run of a claimed pending execution', () =>
        this.runtime.execute(
          { executionId: id, workflow },
          takeover === undefined ? { expect: { status: 'pending' } } : { takeover },
        ),
      );
    }
  }

  /**
   * New fences and logs of the claimed `ids` that are still pending, in one round trip, where
   * the event store takes pending executions over in batches (undefined where it does not:
   * each run acquires its fence and reads its log). A failure is each id's error of the tick.
   */
  private async takeOver(
    ids: readonly string[],
    report: TickReport,
  ): Promise<Map<string, PendingTakeover> | undefined> {
    const events = this.stores.events;
    if (events.takeOverPending === undefined || ids.length === 0) return undefined;
    try {
      return new Map((await events.takeOverPending(ids)).map((taken) => [taken.executionId, taken]));
    } catch (error) {
      for (const id of ids) {
        this.failures.record(id, 'claim', error, this.clock());
        report.errors.push([id, error]);
      }
      return new Map();
    }
  }

  /** Give back the lease of an execution claimed ahead, as a run's end does (its id stays in flight until then). */
  private giveBack(id: string): void {
    if (this.inFlight.has(id)) return;
    this.launch(id, 'give back a claim held ahead', async () => undefined);
  }

  private async fireTimers(report: TickReport): Promise<void> {
    const now = this.clock();
    const due = await this.stores.timers.claimDue({
      now,
      limit: this.concurrency,
      owner: this.owner,
      claimTtlMs: this.ttlMs,
    });
    report.timersFired = due.length;
    for (const id of new Set(due.map((timer) => timer.executionId))) {
      if (this.inFlight.has(id)) continue;
      this.launch(id, 'wake-up for a due timer', () => this.wakeUnlessBackingOff(id), { holdsLease: false });
    }
  }

  /** Wake `id` for its claimed timers, unless it is blocked and backing off (the claims lapse; a later tick tries). */
  private async wakeUnlessBackingOff(id: string): Promise<void> {
    const summary = await this.stores.events.getExecution(id);
    if (summary !== null && (await backingOff(this.stores, summary, this.clock()))) return;
    await this.runtime.wake(id, { claimed: true });
  }

  private async recoverExpired(report: TickReport): Promise<void> {
    const expired = leaseExpired(this.stores, { ttlMs: this.ttlMs, clock: this.clock });
    for await (const summary of walkExecutions(this.stores.events, ['running'])) {
      if (report.recovered.length >= this.concurrency) return;
      const { executionId: id, workflow } = summary;
      if (this.inFlight.has(id)) continue;
      const taken = await this.attempt(id, 'recovery', report, async () => {
        if (!(await expired(summary))) return false;
        // A blocked execution is tried again only once its back-off has passed (adr/0058).
        if (await backingOff(this.stores, summary, this.clock())) return false;
        // A queue recovers its own executions, through a lapsed slot, within its limits.
        if ((await this.queueClaims?.admitted([id]))?.has(id) === true) return false;
        return this.claim(id, 'running', summary.sequence);
      });
      if (taken !== true) continue;
      this.launch(id, 'recovery of an expired lease', () =>
        this.runtime.execute({ executionId: id, workflow }),
      );
      report.recovered.push(id);
    }
  }

  /**
   * Take the execution's lease, then re-read it right before acting: still in `status` (and at
   * `sequence`, when given)? Otherwise give the lease back. True when this node owns the work.
   */
  private async claim(id: string, status: 'pending' | 'running', sequence?: number): Promise<boolean> {
    const key = executionLeaseKey(id);
    if (!(await this.claimLease(id))) return false;
    const fresh = await this.stores.events.getExecution(id);
    if (fresh?.status === status && (sequence === undefined || fresh.sequence === sequence)) return true;
    await this.stores.leases.release(key, this.owner);
    return false;
  }

  /** Take the execution's lease for this node; false when another node holds it. */
  private async claimLease(id: string): Promise<boolean> {
    const key = executionLeaseKey(id);
    return (await this.stores.leases.claim(key, this.owner, this.ttlMs, this.clock())) !== null;
  }

  /**
   * Take the leases of `ids` for this node, in one round trip when the store claims many at
   * once; true at each id this node now owns.
   */
  private async claimLeases(ids: readonly string[], report: TickReport): Promise<boolean[]> {
    const leases = this.stores.leases;
    if (leases.claimMany === undefined || ids.length < 2)
      return Promise.all(
        ids.map(async (id) => (await this.attempt(id, 'claim', report, () => this.claimLease(id))) === true),
      );
    try {
      const keys = ids.map(executionLeaseKey);
      const held = new Set(await leases.claimMany(keys, this.owner, this.ttlMs, this.clock()));
      return keys.map((key) => held.has(key));
    } catch (error) {
      for (const id of ids) {
        this.failures.record(id, 'claim', error, this.clock());
        report.errors.push([id, error]);
      }
      return ids.map(() => false);
    }
  }

  /** Per-execution work of the tick itself: a throw is collected, never fails the tick. */
  private async attempt<T>(
    id: string,
    phase: string,
    report: TickReport,
    work: () => Promise<T>,
  ): Promise<T | undefined> {
    try {
      return await work();
    } catch (error) {
      this.failures.record(id, phase, error, this.clock());
      report.errors.push([id, error]);
      return undefined;
    }
  }

  /**
   * Run the work in the background; its failure is kept for the next tick's report and deadline.
   * @param options.holdsLease the work runs under this node's claim, released when it ends
   *   (default: true; false for wake-ups and queue runs, which hold no claim of this node's)
   */
  private launch(
    id: string,
    phase: string,
    work: () => Promise<unknown>,
    { holdsLease = true }: { holdsLease?: boolean } = {},
  ): void {
    const done = (async () => {
      try {
        await work();
        this.failures.clear(id);
      } catch (error) {
        // Another holder owns the execution (it won the race): not this node's error.
        if (isSupersededRefusal(error, id)) this.failures.clear(id);
        else {
          this.failures.record(id, phase, error, this.clock());
          // A blockage is reported once, by the tick that met it first (adr/0058); it still counts toward the deadline.
          if (!(await this.repeated(id, error))) this.settledErrors.push([id, error]);
        }
      } finally {
        // The slot is free once the work ends; the id stays in flight (this node claims it
        // for nothing else) until its lease is back.
        if (holdsLease) {
          this.releasingSlots += 1;
          this.slotFreed();
          await this.releaseClaim(id);
          this.releasingSlots -= 1;
          this.inFlight.delete(id);
        } else {
          this.inFlight.delete(id);
          this.slotFreed();
        }
      }
    })();
    this.inFlight.set(id, done);
  }

  /** Work running in the slots: what is in flight, less the ended runs whose leases are on their way back. */
  private get running(): number {
    return this.inFlight.size - this.releasingSlots;
  }

  /** A slot came free: hand it to a waiting message or a claim held ahead, and ask for more work when few are left. */
  private slotFreed(): void {
    this.slotWaiters.shift()?.();
    this.startAhead();
    // Claimed ahead work keeps the slots busy while the next tick claims more.
    if (this.backlog && this.ahead.size <= this.concurrency / 2) {
      this.backlog = false;
      this.tickSoon();
    }
  }

  private async repeated(id: string, error: unknown): Promise<boolean> {
    try {
      return await repeatsBlockage(this.stores, id, error);
    } catch {
      return false; // the store cannot say: report the error
    }
  }

  /**
   * The run ended or suspended: give this node's claim back. It is the run's lease too (same
   * key, same owner); a run shorter than a third of the TTL never claimed it itself.
   */
  private async releaseClaim(id: string): Promise<void> {
    if (this.stores.leases.releaseMany !== undefined) return this.releaseBatched(id);
    try {
      await this.stores.leases.release(executionLeaseKey(id), this.owner);
    } catch (error) {
      this.settledErrors.push([id, error]);
    }
  }

  /**
   * `releaseClaim` through `releaseMany`: a release goes out at once when none is under way;
   * those asked for meanwhile go out together right after it (one round trip for every run
   * that ended in between). Resolves once the lease is given back.
   */
  private releaseBatched(id: string): Promise<void> {
    return new Promise((resolve) => {
      this.releases.push({ id, done: resolve });
      if (!this.releasing) void this.flushReleases();
    });
  }

  private async flushReleases(): Promise<void> {
    this.releasing = true;
    try {
      while (this.releases.length > 0) {
        const batch = this.releases.splice(0);
        try {
          await this.stores.leases.releaseMany!(
            batch.map(({ id }) => executionLeaseKey(id)),
            this.owner,
          );
        } catch (error) {
          for (const { id } of batch) this.settledErrors.push([id, error]);
        }
        for (const { done } of batch) done();
      }
    } finally {
      this.releasing = false;
    }
  }
}

/**
 * `onError` as the supervisor calls it: a handler that throws is reported to `console.error`
 * with what it was handed, and the supervisor goes on (a throw would otherwise end the loop).
 */
function guarded(
  onError: (error: unknown, context: string) => void,
): (error: unknown, context: string) => void {
  return (error, context) => {
    try {
      onError(error, context);
    } catch (thrown) {
      console.error(`skein: the supervisor's onError threw while reporting ${context}:`, thrown, error);
    }
  };
}

function validate(s: {
  runtime: Runtime;
  ttlMs: number;
  intervalMs: number;
  concurrency: number;
  deadlineMs: number;
  onTraceparent: unknown;
}): void {
  const issues: { path: string; message: string }[] = [];
  if (s.runtime?.leaseTtlMs === undefined)
    issues.push({
      path: 'runtime',
      message: 'must keep execution leases: create it with createRuntime({ lease: { ttlMs } })',
    });
  if (!(s.ttlMs > 0)) issues.push({ path: 'leaseTtlMs', message: `must be > 0, got ${s.ttlMs}` });
  if (!(s.intervalMs > 0 && s.intervalMs < s.ttlMs))
    issues.push({ path: 'tickIntervalMs', message: `must be > 0 and below leaseTtlMs, got ${s.intervalMs}` });
  if (!Number.isInteger(s.concurrency) || s.concurrency < 1)
    issues.push({ path: 'concurrency', message: `must be an integer >= 1, got ${s.concurrency}` });
  if (!(s.deadlineMs > 0))
    issues.push({ path: 'tickFailureDeadlineMs', message: `must be > 0, got ${s.deadlineMs}` });
  if (s.onTraceparent !== undefined && typeof s.onTraceparent !== 'function')
    issues.push({ path: 'onTraceparent', message: `must be a function, got ${typeof s.onTraceparent}` });
  if (issues.length > 0) throw new InvalidInputError('Supervisor options', issues);
}
