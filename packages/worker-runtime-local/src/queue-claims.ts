/**
 * The supervisor's side of queues (docs/queues.md): each tick, claim slots of every registered
 * queue up to this node's room, run the admitted executions, renew their slots while they run,
 * and give each slot back when its run ends or suspends. Executions a queue admits are left out
 * of the plain pending claims and of lease-expiry recovery: a lapsed slot is how a queue
 * recovers them, within its limits.
 */
import type { QueueDefinition, Runtime } from '@skein/workflow-runtime';
import type { EventStore, PendingTakeover, QueueItem, QueueStore } from '@skein/workflow-runtime/spi';
import { QueueSlotLapsedError } from './errors.js';

/** What the queue claims need from their supervisor. */
export interface QueueClaimsDeps {
  runtime: Runtime;
  queues: QueueStore;
  /** Where a claim's pending executions are taken over together (`takeOverPending`), when it can. */
  events?: EventStore;
  owner: string;
  ttlMs: number;
  /** Runs of this node per queue without a `workerConcurrency` of its own. */
  concurrency: number;
  clock(): number;
  /** True while this supervisor has work of the execution in flight. */
  inFlight(executionId: string): boolean;
  /** Run `work` in the background as the supervisor's work of `executionId`. */
  launch(executionId: string, phase: string, work: () => Promise<unknown>): void;
  onError(error: unknown, context: string): void;
}

/** A failed run is queued again this long after it failed. */
const RETRY_AFTER_MS = 1_000;

/** Slots this node holds, renewed every third of the TTL while any is held. */
export class QueueClaims {
  /** Held slots: execution id → queue name. */
  private readonly held = new Map<string, string>();
  private renewal: ReturnType<typeof setInterval> | undefined;
  /** Claims run one at a time (the tick's and those after a freed slot), so `room` is never counted twice. */
  private claims: Promise<unknown> = Promise.resolve();
  /** A claim after a freed slot is under way; `again`: another slot was freed meanwhile. */
  private reclaiming = false;
  private again = false;
  private halted = false;

  constructor(private readonly deps: QueueClaimsDeps) {}

  /** Claim and run what every registered queue admits now; returns the ids started. */
  claim(): Promise<string[]> {
    const next = this.claims.then(() => (this.halted ? [] : this.claimOnce()));
    this.claims = next.catch(() => undefined);
    return next;
  }

  /**
   * A slot was given back: claim again at once, without waiting for the supervisor's next tick
   * (whose walk over pending executions costs in proportion to the backlog). Slots freed while
   * a claim is under way are claimed right after it.
   */
  private claimSoon(): void {
    if (this.halted) return;
    if (this.reclaiming) {
      this.again = true;
      return;
    }
    this.reclaiming = true;
    void (async () => {
      try {
        do {
          this.again = false;
          await this.claim();
        } while (this.again && !this.halted);
      } catch (error) {
        this.deps.onError(
          error,
          'claim of queue slots after a run gave one back (the next tick claims again)',
        );
      } finally {
        this.reclaiming = false;
      }
    })();
  }

  /** Claim nothing more (the supervisor is stopping; its runs are settling). */
  halt(): void {
    this.halted = true;
  }

  /** Claim again (the supervisor started again). */
  resume(): void {
    this.halted = false;
  }

  private async claimOnce(): Promise<string[]> {
    const started: string[] = [];
    for (const queue of this.deps.runtime.queues.all()) {
      const room = (queue.limits.workerConcurrency ?? this.deps.concurrency) - this.holding(queue.name);
      if (room <= 0) continue;
      const items = await this.deps.queues.claim({
        queue: queue.name,
        owner: this.deps.owner,
        now: this.deps.clock(),
        ttlMs: this.deps.ttlMs,
        max: room,
        limits: queue.limits,
        priority: queue.priority,
      });
      const fresh: QueueItem[] = [];
      for (const item of items) {
        this.hold(item.executionId, queue);
        if (this.deps.inFlight(item.executionId)) continue; // still running here: the slot is its own
        fresh.push(item);
      }
      const takeovers = await this.takeOver(fresh);
      for (const item of fresh) {
        const takeover = takeovers.get(item.executionId);
        this.deps.launch(item.executionId, `run of an execution of queue "${queue.name}"`, () =>
          this.run(item, takeover),
        );
        started.push(item.executionId);
      }
    }
    return started;
  }

  /** Of `ids`, those a queue admits and recovers (left out of plain claims and recovery). */
  async admitted(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    return new Set(await this.deps.queues.admitting(ids));
  }

  /** Stop renewing (the supervisor stopped; its runs have settled). */
  stop(): void {
    if (this.renewal !== undefined) clearInterval(this.renewal);
    this.renewal = undefined;
  }

  private holding(queue: string): number {
    let count = 0;
    for (const name of this.held.values()) if (name === queue) count += 1;
    return count;
  }

  private hold(executionId: string, queue: QueueDefinition): void {
    this.held.set(executionId, queue.name);
    if (this.renewal !== undefined) return;
    this.renewal = setInterval(() => void this.renew(), Math.max(1, Math.floor(this.deps.ttlMs / 3)));
    this.renewal.unref?.();
  }

  /**
   * The claimed items' executions that are still pending, taken over in one round trip (their
   * new fences and logs), where the event store can; the others (running after a lapsed slot,
   * suspended, or not written yet) are absent, and each of their runs folds its own. A failure
   * leaves every run to fold its own.
   */
  private async takeOver(items: readonly QueueItem[]): Promise<Map<string, PendingTakeover>> {
    const events = this.deps.events;
    if (events?.takeOverPending === undefined || items.length === 0) return new Map();
    try {
      const taken = await events.takeOverPending(items.map((item) => item.executionId));
      return new Map(taken.map((takeover) => [takeover.executionId, takeover]));
    } catch (error) {
      this.deps.onError(error, 'takeover of the pending executions of claimed queue slots');
      return new Map();
    }
  }

  /**
   * Run an admitted execution (from `takeover` when the claim took it over); give its slot
   * back as it ends, suspends or fails.
   */
  private async run(item: QueueItem, takeover?: PendingTakeover): Promise<void> {
    const { runtime, queues, owner } = this.deps;
    const id = item.executionId;
    try {
      const request = { executionId: id, workflow: item.workflow, version: item.version };
      // Its seq 0 is there but for an enqueuer that died between the item and seq 0: fold first.
      const state =
        takeover === undefined
          ? await runtime.execute({ ...request, input: runtime.codec.decode(item.input) }, { existing: true })
          : await runtime.execute(request, { takeover, existing: true });
      // A run that suspended gave its slot back itself, before anything could resume it
      // (adr/0056); releasing here could give back a slot this node took again meanwhile.
      if (state.status === 'pending' || state.status === 'running')
        await queues.release(id, owner, { state: 'queued', availableAt: this.deps.clock() });
      // An execution whose seq 0 names its queue left it at its end through the runtime; one
      // started here from the item (its enqueuer died before seq 0) names none and leaves here.
      else if (state.status !== 'suspended' && state.queue === undefined) await queues.finish(id);
    } catch (error) {
      await queues.release(id, owner, { state: 'queued', availableAt: this.deps.clock() + RETRY_AFTER_MS });
      throw error;
    } finally {
      this.held.delete(id);
      if (this.held.size === 0) this.stop();
      this.claimSoon();
    }
  }

  /**
   * A slot the renewal missed: lapsed, or given back meanwhile by its run (the item deleted at
   * the end, or released as the run suspended)? Only a lapse is reported.
   */
  private async lapsed(executionId: string): Promise<boolean> {
    const entry = await this.deps.queues.get(executionId);
    if (entry === null || entry.state === 'suspended') return false;
    const live = (entry.expiresAt ?? 0) > this.deps.clock();
    return !(entry.state === 'running' && entry.owner === this.deps.owner && live);
  }

  private async renew(): Promise<void> {
    const ids = [...this.held.keys()];
    if (ids.length === 0) return;
    try {
      const renewed = new Set(
        await this.deps.queues.renew(this.deps.owner, ids, this.deps.ttlMs, this.deps.clock()),
      );
      for (const id of ids) {
        const queue = this.held.get(id);
        if (renewed.has(id) || queue === undefined) continue;
        if (await this.lapsed(id))
          this.deps.onError(new QueueSlotLapsedError(id, queue), 'queue slot renewal');
      }
    } catch (error) {
      this.deps.onError(error, 'queue slot renewal');
    }
  }
}
