/**
 * Durable supervision, the runtime's half: an opt-in lease per running execution in the
 * `LeaseStore`, claimed at the first renewal tick after the run's first append is durable,
 * renewed from then on by one timer per running execution (never a write per step), and
 * released when the run ends or suspends. A run shorter than a third of the TTL writes no
 * lease row and has no timer of its own.
 * A supervisor on any node treats an expired lease as an abandoned execution (docs/architecture.md#leases).
 */
import type { EventStore, LeaseStore } from './spi.js';

/** Lease time-to-live when none is given (default of `lease.ttlMs` and of `leaseExpired`). */
export const DEFAULT_LEASE_TTL_MS = 30_000;

/** Options of the opt-in execution lease (`createRuntime({ lease })`). */
export interface LeaseOptions {
  /** How long a lease holds without renewal; renewed every third of it (default: 30 000). */
  ttlMs?: number;
  /** Owner written into each lease (default: the runtime's `nodeId`). */
  owner?: string;
}

/** The key of the lease a leading `Supervisor` holds, unless given another `leaderKey`. */
export const SUPERVISOR_LEADER_KEY = 'supervisor:leader';

/**
 * The lease a leading `Supervisor` with another `leaderKey` also holds (adr/0093), so that the
 * runtimes' in-process maintenance sees it lead whatever its key. Leaders of several keys share
 * it: whichever claims it first renews it while it leads; the others claim it once it lapses.
 */
export const SUPERVISOR_PRESENCE_KEY = 'supervisor:leading';

/** The `LeaseStore` key of an execution's lease: `execution:<id>`. */
export function executionLeaseKey(executionId: string): string {
  return `execution:${executionId}`;
}

/** What {@link ExecutionLeases} needs from its runtime. */
export interface ExecutionLeasesDeps {
  leases: LeaseStore;
  events: EventStore;
  owner: string;
  ttlMs: number;
  clock: () => number;
  onError: (error: unknown, context: string) => void;
}

/** A run's hold on its execution's lease ({@link ExecutionLeases.hold}). */
export interface HeldLease {
  /**
   * Stop renewing; once a claim or renewal in progress has settled, release the row if this
   * run claimed it and no other run here holds the execution. Undefined when there is nothing
   * to wait for (the run never reached its first renewal tick: no row was claimed).
   */
  release(): Promise<void> | undefined;
}

/** Where a run's first durable append is found when a lease first needs it (a log writer). */
export interface FirstAppendSource {
  /** Settles with the outcome of the run's first append. */
  readonly firstAppend: Promise<void>;
}

/**
 * The leases of the runs in this process. Several runs of one execution may overlap here (a
 * dispatcher's redispatch after a deadline); the row is released only when the last ends.
 *
 * Most runs end long before their first renewal tick (`ttlMs / 3`), so a run starts without a
 * timer of its own: young runs wait in one queue, in the order they began, behind one timer
 * set for the oldest. A run that reaches its first tick leaves the queue, claims, and from
 * then on renews by its own timer. A run that ends young costs a queue entry and nothing else.
 */
export class ExecutionLeases {
  /** Runs holding each execution here, counted (a row is released only when the last ends). */
  private readonly holders = new Map<string, number>();
  /** Runs that have not reached their first renewal tick, oldest first. */
  private readonly youngRuns = new Set<LeaseKeeper>();
  private youngTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly period: number;

  constructor(private readonly deps: ExecutionLeasesDeps) {
    this.period = renewalPeriod(deps.ttlMs);
  }

  /**
   * Keep the lease of `executionId` for a run appending with `fence`, from the first renewal
   * tick (`ttlMs / 3` after this call) once `firstAppend` (the run's first durable append) has
   * succeeded, until the returned hold is released.
   * @param firstAppend the promise, or an object whose `firstAppend` is read only at the first
   *   renewal tick (a run's log writer: most runs end before it and never make the promise).
   */
  hold(executionId: string, fence: number, firstAppend: Promise<void> | FirstAppendSource): HeldLease {
    const keeper = new LeaseKeeper(this, this.deps, executionId, fence, firstAppend, performance.now());
    this.holders.set(executionId, (this.holders.get(executionId) ?? 0) + 1);
    this.youngRuns.add(keeper);
    if (this.youngTimer === undefined) this.armYoung(this.period);
    return keeper;
  }

  /** Executions some run here holds now (a run that ended counts no more). */
  get holding(): number {
    return this.holders.size;
  }

  /** Runs here that have not reached their first renewal tick. */
  get young(): number {
    return this.youngRuns.size;
  }

  /** Called by a keeper that stopped: it no longer waits for its first tick. */
  leftYoung(keeper: LeaseKeeper): void {
    if (!this.youngRuns.delete(keeper) || this.youngRuns.size > 0 || this.youngTimer === undefined) return;
    clearTimeout(this.youngTimer);
    this.youngTimer = undefined;
  }

  /** Count one run of `executionId` less; true when it was the last one here. */
  letGo(executionId: string): boolean {
    const left = (this.holders.get(executionId) ?? 1) - 1;
    if (left > 0) {
      this.holders.set(executionId, left);
      return false;
    }
    this.holders.delete(executionId);
    return true;
  }

  private armYoung(delay: number): void {
    this.youngTimer = setTimeout(() => this.promoteYoung(), Math.max(1, Math.ceil(delay)));
    this.youngTimer.unref();
  }

  /** The young runs whose first renewal tick has come claim and start their own timers. */
  private promoteYoung(): void {
    this.youngTimer = undefined;
    const now = performance.now();
    for (const keeper of this.youngRuns) {
      // A timer may fire up to a millisecond before its delay by the monotonic clock.
      const due = keeper.bornAt + this.period - now;
      if (due > 1) {
        this.armYoung(due);
        return;
      }
      this.youngRuns.delete(keeper);
      keeper.firstTick(this.period);
    }
  }
}

/** Milliseconds between a lease's renewals: a third of its TTL (at least 1). */
function renewalPeriod(ttlMs: number): number {
  return Math.max(1, Math.floor(ttlMs / 3));
}

/** One run's claim and, once it reached its first renewal tick, its renewal timer. */
class LeaseKeeper implements HeldLease {
  private chain: Promise<void> | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  private stopped = false;
  /** True once the run's first append was durable: from then on the run owns the execution. */
  private appended = false;
  /** True once a claim was attempted (at the first renewal tick after the first append). */
  private claimedOnce = false;

  constructor(
    private readonly owner: ExecutionLeases,
    private readonly deps: ExecutionLeasesDeps,
    private readonly executionId: string,
    private readonly fence: number,
    private readonly firstAppend: Promise<void> | FirstAppendSource,
    /** When the run began (`performance.now()`). */
    readonly bornAt: number,
  ) {}

  /**
   * The first renewal tick: claim once the first append is durable (a run whose first append
   * failed never owned the execution and claims nothing), then renew every `period` ms.
   * No claim before it: a run that ends sooner writes no lease row, and until then
   * `leaseExpired` counts it alive by its fresh events (adr/0006).
   */
  firstTick(period: number): void {
    if (this.stopped) return;
    const firstAppend = this.firstAppend instanceof Promise ? this.firstAppend : this.firstAppend.firstAppend;
    firstAppend.then(
      () => {
        this.appended = true;
        this.renew();
      },
      () => undefined,
    );
    this.timer = setInterval(() => this.renew(), period);
    this.timer.unref();
  }

  release(): Promise<void> | undefined {
    this.stopped = true;
    if (this.timer === undefined) {
      this.owner.leftYoung(this);
      this.owner.letGo(this.executionId);
      return undefined; // never ticked: nothing claimed, nothing in flight
    }
    clearInterval(this.timer);
    return this.releaseClaimed();
  }

  private async releaseClaimed(): Promise<void> {
    await this.chain;
    if (!this.owner.letGo(this.executionId) || !this.claimedOnce) return;
    try {
      await this.deps.leases.release(executionLeaseKey(this.executionId), this.deps.owner);
    } catch (error) {
      this.deps.onError(error, `release of the lease of execution "${this.executionId}"`);
    }
  }

  private renew(): void {
    this.chain = (this.chain ?? Promise.resolve()).then(async () => {
      if (this.stopped || !this.appended) return;
      try {
        // A newer fence means another holder took the execution over: stop keeping its lease.
        if ((await this.deps.events.currentFence(this.executionId)) > this.fence) {
          this.stopped = true;
          clearInterval(this.timer);
          return;
        }
      } catch (error) {
        this.deps.onError(error, `fence check of execution "${this.executionId}" before lease renewal`);
      }
      await this.claim();
    });
  }

  /** Claim, or extend when already ours; null (another live owner) is retried at the next renewal. */
  private async claim(): Promise<void> {
    if (this.stopped) return;
    this.claimedOnce = true;
    const { leases, owner, ttlMs, clock } = this.deps;
    try {
      await leases.claim(executionLeaseKey(this.executionId), owner, ttlMs, clock());
    } catch (error) {
      this.deps.onError(error, `lease of execution "${this.executionId}"`);
    }
  }
}
