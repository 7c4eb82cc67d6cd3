/**
 * In-process maintenance (adr/0042): what a restarted single process needs to pick its work
 * back up with no `Supervisor`. A first pass right after the runtime is created, then one
 * every `intervalMs`: fire due timers, run pending executions, and take over running ones
 * whose lease expired (their owner died). Every piece of work is claimed in the stores
 * first (a timer claim, an execution lease), so several processes on one store share it
 * safely; a `Supervisor` given the runtime turns this off and does it instead.
 */
import { z } from 'zod';
import { backingOff, repeatsBlockage } from './blockage.js';
import { InvalidInputError } from './errors.js';
import { leaseExpired } from './lease-expired.js';
import { executionLeaseKey, SUPERVISOR_LEADER_KEY, SUPERVISOR_PRESENCE_KEY } from './leases.js';
import { walkExecutions } from './recover-abandoned.js';
import type { ExecutionSummary, Stores } from './spi.js';

/** Options of the in-process maintenance (`createRuntime({ maintenance })`). */
export interface MaintenanceOptions {
  /** Pause between passes, in ms; must be below the lease TTL (default: 1 000, or a third of a shorter TTL). */
  intervalMs?: number;
  /** Executions this runtime takes from a pass at once: claims, recoveries, due timers (default: 10). */
  concurrency?: number;
}

export const maintenanceOptionsSchema = z.union([
  z.literal(false),
  z
    .object({
      intervalMs: z.number().int().positive().optional(),
      concurrency: z.number().int().positive().optional(),
    })
    .strict(),
]);

/** What one maintenance pass did. */
export interface MaintenancePass {
  /** Pending executions claimed and started. */
  claimed: string[];
  /** Running executions whose lease expired, taken over. */
  recovered: string[];
  /** Executions resumed for a due timer. */
  woken: string[];
}

/** What the maintenance needs from its runtime. */
export interface MaintenanceDeps {
  stores: Stores;
  owner: string;
  ttlMs: number;
  clock: () => number;
  onError: (error: unknown, context: string) => void;
  /** Whether this runtime runs workflow `name` (work of other workflows is left to others). */
  runs: (name: string) => boolean;
  /** The names of the workflows this runtime runs: only their due timers are claimed. */
  workflows: () => readonly string[];
  /** Whether a run of the execution is in progress here. */
  running: (executionId: string) => boolean;
  /** The run of the execution in progress here, if any: settles when it has ended. */
  runOf: (executionId: string) => Promise<unknown> | undefined;
  /** Take over or start a pending/running execution (`runtime.execute`). */
  execute: (summary: ExecutionSummary) => Promise<unknown>;
  /** Resume an execution whose due timers this runtime claimed (`runtime.wake`). */
  wake: (executionId: string) => Promise<unknown>;
}

/** The loop of passes; see the file comment. */
export class Maintenance {
  private readonly intervalMs: number;
  private readonly concurrency: number;
  private readonly inFlight = new Map<string, Promise<void>>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private pass: Promise<unknown> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly deps: MaintenanceDeps,
    options: MaintenanceOptions,
  ) {
    this.intervalMs = options.intervalMs ?? Math.max(1, Math.min(1_000, Math.floor(deps.ttlMs / 3)));
    this.concurrency = options.concurrency ?? 10;
    if (options.intervalMs !== undefined && this.intervalMs >= deps.ttlMs)
      throw new InvalidInputError('createRuntime options', [
        {
          path: 'maintenance.intervalMs',
          message: `must be below the lease TTL (${deps.ttlMs}), got ${this.intervalMs}`,
        },
      ]);
  }

  /** Schedule the first pass as soon as the caller's synchronous code is done. */
  start(): void {
    this.schedule(0);
  }

  /** Run one pass now (after the one in progress). Errors of one execution do not stop it. */
  runOnce(): Promise<MaintenancePass> {
    const next = this.pass.then(() => this.passOnce());
    this.pass = next.catch(() => undefined);
    return next;
  }

  /** The work this maintenance is doing on `executionId`, if any: settles when it ends (never rejects). */
  working(executionId: string): Promise<void> | undefined {
    return this.inFlight.get(executionId);
  }

  /** Stop the passes and wait for the pass in progress (and, when `waitForRuns`, the runs it started). */
  async stop(options: { waitForRuns: boolean }): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.pass;
    if (!options.waitForRuns) return;
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight.values()]);
  }

  private schedule(delay: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.runOnce()
        .catch((error) => this.deps.onError(error, 'maintenance pass (the next one tries again)'))
        .finally(() => this.schedule(this.intervalMs));
    }, delay);
    // A process with nothing else to do may exit: its work waits in the store for the next start.
    this.timer.unref?.();
  }

  private async passOnce(): Promise<MaintenancePass> {
    const done: MaintenancePass = { claimed: [], recovered: [], woken: [] };
    if (this.stopped || (await this.supervised())) return done;
    await this.fireTimers(done);
    await this.claim('pending', done.claimed);
    await this.claim('running', done.recovered);
    return done;
  }

  /**
   * True while a `Supervisor` leads over these stores (another owner holds the default leader
   * lease, or the presence lease a leader of another key holds, unexpired): the supervisors do
   * this work, so the pass is skipped (adr/0087, adr/0093).
   */
  private async supervised(): Promise<boolean> {
    const { leases } = this.deps.stores;
    const held = await Promise.all([leases.get(SUPERVISOR_LEADER_KEY), leases.get(SUPERVISOR_PRESENCE_KEY)]);
    const now = this.deps.clock();
    return held.some((lease) => lease !== null && lease.owner !== this.deps.owner && lease.expiresAt > now);
  }

  private free(): number {
    return this.concurrency - this.inFlight.size;
  }

  private async fireTimers(done: MaintenancePass): Promise<void> {
    if (this.free() <= 0) return;
    const { stores, owner, ttlMs, clock } = this.deps;
    // Only timers this runtime can act on: another runtime's stay due for it (not claimed here for ttlMs).
    const workflows = this.deps.workflows();
    const claim = { now: clock(), limit: this.free(), owner, claimTtlMs: ttlMs, workflows };
    const due = await stores.timers.claimDue(claim);
    // Launched at once, so a `runtime.wake` of the same execution finds this work and waits.
    for (const id of new Set(due.map((timer) => timer.executionId))) {
      if (this.inFlight.has(id)) continue;
      // A run in progress here may be suspending on this very timer: the claim is this pass's
      // now (the runtime's own wake-up would find it taken), so wake it once that run has ended.
      const run = this.deps.runOf(id);
      const work =
        run === undefined
          ? () => this.wakeIfRun(id)
          : async () => {
              await run.catch(() => undefined);
              await this.wakeIfRun(id);
            };
      this.launch(id, 'wake-up for a due timer', work, { holdsLease: false });
      done.woken.push(id);
    }
  }

  /**
   * Wake `id` unless its workflow is not one this runtime runs (its claim lapses for a node that
   * does) or it is blocked and backing off (the claim lapses and a later pass tries again).
   */
  private async wakeIfRun(id: string): Promise<void> {
    const { stores, clock } = this.deps;
    const summary = await stores.events.getExecution(id);
    if (summary === null || !this.deps.runs(summary.workflow)) return;
    if (await backingOff(stores, summary, clock())) return;
    await this.deps.wake(id);
  }

  /**
   * Claim executions in `status` (pending: any; running: only those whose lease expired),
   * take the execution's lease, re-read it, and run it here.
   */
  private async claim(status: 'pending' | 'running', into: string[]): Promise<void> {
    const expired = leaseExpired(this.deps.stores, { ttlMs: this.deps.ttlMs, clock: this.deps.clock });
    for await (const summary of walkExecutions(this.deps.stores.events, [status])) {
      if (this.free() <= 0 || this.stopped) return;
      const id = summary.executionId;
      if (this.inFlight.has(id) || this.deps.running(id) || !this.deps.runs(summary.workflow)) continue;
      try {
        if (status === 'running' && !(await expired(summary))) continue;
        // A blocked execution is tried again only once its back-off has passed (adr/0058).
        if (status === 'running' && (await backingOff(this.deps.stores, summary, this.deps.clock())))
          continue;
        // Work a queue admits is claimed within its limits, by a Supervisor (docs/queues.md).
        if ((await this.deps.stores.queues?.admitting([id]))?.length) continue;
        if (!(await this.take(summary))) continue;
      } catch (error) {
        this.deps.onError(error, `maintenance: claim of execution "${id}"`);
        continue;
      }
      const phase =
        status === 'pending' ? 'run of a claimed pending execution' : 'recovery of an expired lease';
      this.launch(id, phase, () => this.deps.execute(summary), { holdsLease: true });
      into.push(id);
    }
  }

  /** The execution's lease, then a re-read: unchanged since listed? Otherwise the lease goes back. */
  private async take(summary: ExecutionSummary): Promise<boolean> {
    const { stores, owner, ttlMs, clock } = this.deps;
    const key = executionLeaseKey(summary.executionId);
    if ((await stores.leases.claim(key, owner, ttlMs, clock())) === null) return false;
    const fresh = await stores.events.getExecution(summary.executionId);
    if (fresh?.status === summary.status && fresh.sequence === summary.sequence) return true;
    await stores.leases.release(key, owner);
    return false;
  }

  private launch(
    id: string,
    phase: string,
    work: () => Promise<unknown>,
    { holdsLease }: { holdsLease: boolean },
  ): void {
    const done = (async () => {
      try {
        await work();
      } catch (error) {
        // A blockage is reported once, by the pass that met it first (adr/0058).
        if (!(await this.repeated(id, error)))
          this.deps.onError(error, `maintenance: ${phase} of execution "${id}"`);
      } finally {
        if (holdsLease) await this.release(id);
        this.inFlight.delete(id);
      }
    })();
    this.inFlight.set(id, done);
  }

  private async repeated(id: string, error: unknown): Promise<boolean> {
    try {
      return await repeatsBlockage(this.deps.stores, id, error);
    } catch {
      return false; // the store cannot say: report the error
    }
  }

  private async release(id: string): Promise<void> {
    try {
      await this.deps.stores.leases.release(executionLeaseKey(id), this.deps.owner);
    } catch (error) {
      this.deps.onError(error, `maintenance: release of the lease of execution "${id}"`);
    }
  }
}
