/**
 * Durable supervision, the runtime's half: an opt-in lease per running execution in the
 * `LeaseStore`, claimed at the first renewal tick after the run's first append is durable,
 * renewed by one timer per running execution (never a write per step), and released when
 * the run ends or suspends. A run shorter than a third of the TTL writes no lease row.
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

/**
 * The leases of the runs in this process. Several runs of one execution may overlap here (a
 * dispatcher's redispatch after a deadline); the row is released only when the last ends.
 */
export class ExecutionLeases {
  private readonly held = new Map<string, Set<LeaseKeeper>>();

  constructor(private readonly deps: ExecutionLeasesDeps) {}

  /**
   * Keep the lease of `executionId` for a run appending with `fence`, from the first renewal
   * tick after `firstAppend` (the run's first durable append) until the returned release is
   * called, which releases it if it was claimed.
   */
  hold(executionId: string, fence: number, firstAppend: Promise<void>): () => Promise<void> {
    const keeper = new LeaseKeeper(this.deps, executionId, fence, firstAppend);
    let keepers = this.held.get(executionId);
    if (keepers === undefined) {
      keepers = new Set();
      this.held.set(executionId, keepers);
    }
    keepers.add(keeper);
    return async () => {
      await keeper.stop();
      keepers.delete(keeper);
      if (keepers.size > 0 || !keeper.claimedOnce) return;
      if (this.held.get(executionId) === keepers) this.held.delete(executionId);
      try {
        await this.deps.leases.release(executionLeaseKey(executionId), this.deps.owner);
      } catch (error) {
        this.deps.onError(error, `release of the lease of execution "${executionId}"`);
      }
    };
  }
}

/** One run's claim and renewal timer. */
class LeaseKeeper {
  private chain: Promise<void> = Promise.resolve();
  private readonly timer: ReturnType<typeof setInterval>;
  private stopped = false;
  /** True once the run's first append was durable: from then on the run owns the execution. */
  private appended = false;
  /** True once a claim was attempted (at the first renewal tick after the first append). */
  claimedOnce = false;

  constructor(
    private readonly deps: ExecutionLeasesDeps,
    private readonly executionId: string,
    private readonly fence: number,
    firstAppend: Promise<void>,
  ) {
    // A run whose first append failed never owned the execution: it claims nothing.
    firstAppend.then(
      () => {
        this.appended = true;
      },
      () => undefined,
    );
    // No claim before the first renewal tick: a run that ends sooner writes no lease row, and
    // until then `leaseExpired` counts it alive by its fresh events (adr/0006).
    this.timer = setInterval(() => this.renew(), Math.max(1, Math.floor(deps.ttlMs / 3)));
    this.timer.unref();
  }

  /** Stop renewing; resolves once a claim or renewal in progress has settled. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.chain;
  }

  private renew(): void {
    this.chain = this.chain.then(async () => {
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
