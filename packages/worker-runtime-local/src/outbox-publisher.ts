/**
 * `OutboxPublisher`: relays the outbox to a broker transport (docs/outbox.md). It claims a
 * batch of available deliveries, publishes them with confirms, and settles each by its own
 * outcome: a confirmed one is marked published (O2: never before the confirm); a returned,
 * nacked or failed one is rescheduled after a bounded backoff, and retired with its last
 * reason once it failed `maxDeliveryAttempts` times. A publisher that dies between publish
 * and settle leaves its claims to lapse; they are published again (O3: at least once).
 */
import {
  backoffIssues,
  messageOf,
  type PublishOutcome,
  retryDelay,
  type Transport,
} from '@skein/worker-runtime';
import { InvalidInputError, type OutboxStore, type Stores } from '@skein/workflow-runtime';
import { type ClaimedDelivery, DEFAULT_MAX_DELIVERY_ATTEMPTS } from '@skein/workflow-runtime/spi';
import { OutboxMissingError } from './errors.js';
import { type OutboxRetention, type OutboxRetentionOptions, retentionOf } from './outbox-retention.js';
import { WAKEUP_CHANNEL_OUTBOX } from './store-transport.js';
import type { WakeupSource } from './supervisor-wakeups.js';

/** Options of {@link OutboxPublisher}. */
export interface OutboxPublisherOptions {
  /** The stores whose outbox is relayed (`stores.outbox` is required). */
  stores: Pick<Stores, 'outbox'>;
  /** Where the messages go; a transport that `relays` (a broker). */
  transport: Transport;
  /** Deliveries claimed and published together (default: 100). */
  batchSize?: number;
  /** Batches in flight at once (default: 2). */
  concurrency?: number;
  /** How long a claim lasts before another publisher may take the delivery (default: 30 000). */
  leaseMs?: number;
  /** How often an idle publisher looks at the outbox (default: 100). */
  pollIntervalMs?: number;
  /**
   * Backoff after a failed publish: a delay drawn from the upper half of
   * `min(maxMs, initialMs * 2^(attempts-1))` (`retryDelay`, default: 200 and 30 000).
   */
  retry?: { initialMs?: number; maxMs?: number };
  /** A delivery failing this many times is retired with its last reason (default: 10). */
  maxDeliveryAttempts?: number;
  /**
   * Prune published deliveries while relaying (see `OutboxRetentionOptions`), or `false` to
   * keep them all (default: on, a day after they were settled, every minute).
   */
  retention?: OutboxRetentionOptions | false;
  /** Outbox wake-ups (PostgreSQL's `stores.wakeups`, channel `outbox`) that cut the poll short (default: none). */
  wakeups?: WakeupSource;
  /** Milliseconds since the epoch (default: `Date.now`). */
  clock?: () => number;
  /** Where errors of the relay loop go (default: `console.error`). */
  onError?: (error: unknown, context: string) => void;
}

/** What one relay pass did. */
export interface RelayReport {
  claimed: number;
  published: number;
  rescheduled: number;
  retired: number;
  /** Settlements refused because the claim had lapsed and another claimer holds the delivery. */
  lost: number;
}

/**
 * Relays the outbox to `transport`; see the module comment.
 * @example
 * const publisher = new OutboxPublisher({ stores, transport, batchSize: 200 });
 * publisher.start();
 * // …
 * await publisher.stop();
 */
export class OutboxPublisher {
  private readonly outbox: OutboxStore;
  private readonly transport: Transport;
  private readonly batchSize: number;
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private readonly pollIntervalMs: number;
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly maxAttempts: number;
  private readonly clock: () => number;
  private readonly onError: (error: unknown, context: string) => void;
  private readonly wakeups: WakeupSource | undefined;
  private loops: Promise<void>[] = [];
  private stopping = false;
  private readonly sleepers = new Set<() => void>();
  /** A kick that came while no loop was asleep: the next sleep is skipped. */
  private kicked = false;
  private unsubscribe: (() => Promise<void>) | undefined;
  private readonly retention: OutboxRetention | undefined;

  constructor(options: OutboxPublisherOptions) {
    if (options?.stores?.outbox === undefined) throw new OutboxMissingError('OutboxPublisher');
    this.outbox = options.stores.outbox;
    this.transport = options.transport;
    this.batchSize = options.batchSize ?? 100;
    this.concurrency = options.concurrency ?? 2;
    this.leaseMs = options.leaseMs ?? 30_000;
    this.pollIntervalMs = options.pollIntervalMs ?? 100;
    this.initialMs = options.retry?.initialMs ?? 200;
    this.maxMs = options.retry?.maxMs ?? 30_000;
    this.maxAttempts = options.maxDeliveryAttempts ?? DEFAULT_MAX_DELIVERY_ATTEMPTS;
    this.clock = options.clock ?? Date.now;
    this.onError = options.onError ?? ((error, context) => console.error(`skein: ${context}:`, error));
    this.wakeups = options.wakeups;
    this.validate();
    this.retention = retentionOf(
      this.outbox,
      options.retention,
      this.clock,
      this.onError,
      'OutboxPublisher options',
    );
  }

  /** Relay until `stop()`: each loop claims, publishes and settles a batch, then looks again. */
  start(): void {
    if (this.loops.length > 0) return;
    this.stopping = false;
    const listening = this.listen();
    this.loops = Array.from({ length: this.concurrency }, () => listening.then(() => this.run()));
    this.retention?.start();
  }

  /** Stop relaying and wait for the batches in flight to settle. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const wake of this.sleepers) wake();
    await Promise.all(this.loops);
    this.loops = [];
    await this.retention?.stop();
    await this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  /** Cut the current poll short: there is something to relay (an in-process enqueue, say). */
  kick(): void {
    if (this.sleepers.size === 0) this.kicked = true;
    for (const wake of this.sleepers) wake();
  }

  /**
   * Delete the published deliveries past their retention now (what the running publisher
   * does every `retention.intervalMs`); returns how many. 0 with `retention: false`.
   */
  async prune(): Promise<number> {
    return (await this.retention?.pruneNow()) ?? 0;
  }

  /** Claim one batch, publish it, and settle each delivery by its own outcome. */
  async relayOnce(): Promise<RelayReport> {
    const report = emptyReport();
    const batch = await this.claimBatch();
    report.claimed = batch.length;
    if (batch.length > 0) await this.settleBatch(batch, await this.publish(batch), report);
    return report;
  }

  private claimBatch(): Promise<ClaimedDelivery[]> {
    return this.outbox.claim({
      now: this.clock(),
      limit: this.batchSize,
      leaseMs: this.leaseMs,
      maxDeliveryAttempts: this.maxAttempts,
    });
  }

  /** O2: the confirmed ones are marked published together, in one call; the others go back each with its reason. */
  private async settleBatch(
    batch: readonly ClaimedDelivery[],
    outcomes: readonly PublishOutcome[],
    report: RelayReport,
  ): Promise<void> {
    const confirmed = batch.filter((_, i) => outcomes[i]!.status === 'confirmed');
    const marks =
      confirmed.length === 0
        ? Promise.resolve([])
        : this.outbox.markPublishedAll(
            confirmed.map((d) => ({ id: d.id, token: d.claimToken })),
            this.clock(),
          );
    const failed = batch.flatMap((d, i) =>
      outcomes[i]!.status === 'confirmed' ? [] : [this.settle(d, outcomes[i]!, report)],
    );
    for (const marked of await marks) report[marked ? 'published' : 'lost'] += 1;
    await Promise.all(failed);
  }

  private async publish(batch: readonly ClaimedDelivery[]): Promise<PublishOutcome[]> {
    try {
      const outcomes = await this.transport.publish(batch.map(messageOf));
      if (outcomes.length !== batch.length)
        throw new Error(`the transport answered ${outcomes.length} outcomes for ${batch.length} messages`);
      return outcomes;
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return batch.map(() => ({ status: 'failed', reason }));
    }
  }

  /** O2: published only on a confirm; anything else goes back with its reason. */
  private async settle(
    delivery: ClaimedDelivery,
    outcome: PublishOutcome,
    report: RelayReport,
  ): Promise<void> {
    const now = this.clock();
    if (outcome.status === 'confirmed') {
      if (await this.outbox.markPublished(delivery.id, delivery.claimToken, now)) report.published += 1;
      else report.lost += 1;
      return;
    }
    const backoff = retryDelay(delivery.attempts, { initialMs: this.initialMs, maxMs: this.maxMs });
    const result = await this.outbox.reschedule(delivery.id, delivery.claimToken, {
      availableAt: now + backoff,
      error: `${outcome.status}: ${outcome.reason}`,
      now,
      maxDeliveryAttempts: this.maxAttempts,
    });
    report[result === 'rescheduled' ? 'rescheduled' : result === 'retired' ? 'retired' : 'lost'] += 1;
  }

  private async listen(): Promise<void> {
    if (this.wakeups === undefined) return;
    try {
      this.unsubscribe = await this.wakeups.subscribe(WAKEUP_CHANNEL_OUTBOX, () => this.kick());
    } catch (error) {
      this.onError(error, 'OutboxPublisher: subscribe to outbox wake-ups (polling goes on)');
    }
  }

  /**
   * One relay loop, pipelined: while the broker confirms a full batch, the loop claims the next
   * one, and once the confirms are in, the batch's settlement goes on in the background while
   * the next batch is published, so the broker is not left waiting for the store. At most one
   * claim ahead and one settlement per loop are in flight; a claim lapses only after
   * `leaseMs`, and O2 holds: only confirmed deliveries are marked published.
   */
  private async run(): Promise<void> {
    let ahead: Promise<ClaimedDelivery[]> | undefined;
    let settling: Promise<void> | undefined;
    const settled = async () => {
      await settling;
      settling = undefined;
    };
    for (;;) {
      const batch = await (ahead ?? this.claimAhead());
      ahead = undefined;
      if (batch.length > 0) {
        const publishing = this.publish(batch);
        // A full batch says more is waiting: claim it while this one is confirmed.
        if (batch.length === this.batchSize && !this.stopping) ahead = this.claimAhead();
        const outcomes = await publishing;
        await settled();
        settling = this.settleBatch(batch, outcomes, emptyReport()).catch((error: unknown) =>
          this.onError(error, 'OutboxPublisher: settle'),
        );
      }
      if (ahead !== undefined) continue; // a batch claimed ahead is published, even when stopping
      if (this.stopping) break;
      if (batch.length === this.batchSize) continue;
      await settled();
      if (this.kicked) {
        this.kicked = false;
        continue;
      }
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.sleepers.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, this.pollIntervalMs);
        this.sleepers.add(wake);
      });
    }
    await settled();
  }

  /** A claim whose failure is reported and comes to an empty batch (the loop looks again later). */
  private claimAhead(): Promise<ClaimedDelivery[]> {
    return this.claimBatch().catch((error: unknown) => {
      this.onError(error, 'OutboxPublisher: claim');
      return [];
    });
  }

  private validate(): void {
    const issues: { path: string; message: string }[] = [];
    if (this.transport === undefined || typeof this.transport.publish !== 'function')
      issues.push({ path: 'transport', message: 'must be a Transport' });
    else if (!this.transport.relays)
      issues.push({
        path: 'transport',
        message: 'does not relay (a StoreTransport reads the outbox itself and needs no publisher)',
      });
    for (const [path, value] of Object.entries({
      batchSize: this.batchSize,
      concurrency: this.concurrency,
      maxDeliveryAttempts: this.maxAttempts,
    }))
      if (!Number.isSafeInteger(value) || value < 1)
        issues.push({ path, message: `must be an integer >= 1, got ${value}` });
    for (const [path, value] of Object.entries({
      leaseMs: this.leaseMs,
      pollIntervalMs: this.pollIntervalMs,
    }))
      if (!(value > 0)) issues.push({ path, message: `must be > 0, got ${value}` });
    issues.push(...backoffIssues('retry', { initialMs: this.initialMs, maxMs: this.maxMs }));
    if (issues.length > 0) throw new InvalidInputError('OutboxPublisher options', issues);
  }
}

function emptyReport(): RelayReport {
  return { claimed: 0, published: 0, rescheduled: 0, retired: 0, lost: 0 };
}
