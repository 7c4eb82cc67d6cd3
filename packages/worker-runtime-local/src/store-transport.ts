/**
 * `StoreTransport`: the embedded default, no broker (docs/outbox.md). Consumers claim outbox
 * deliveries of their topic straight from the store, renew the claim while the handler runs,
 * and settle each by the handler's verdict: `ack` marks it published (consumed), `retry`
 * reschedules it after a bounded backoff (the store's `availableAt`), and a delivery that
 * failed `maxAttempts` times, or that the handler quarantines, is retired with the reason.
 * A consumer that dies leaves its claims to lapse; another consumer then takes them.
 */
import {
  backoffIssues,
  type ConsumeOptions,
  DEFAULT_CONSUME_MAX_ATTEMPTS,
  DEFAULT_PREFETCH,
  handle,
  type MessageHandler,
  messageOf,
  type PublishOutcome,
  type QuarantinedMessage,
  retryDelay,
  type Subscription,
  type Transport,
  type TransportMessage,
} from '@skein/worker-runtime';
import { InvalidInputError, type OutboxStore, type Stores } from '@skein/workflow-runtime';
import type { ClaimedDelivery } from '@skein/workflow-runtime/spi';
import { OutboxMissingError, TransportClosedError } from './errors.js';
import { type OutboxRetention, type OutboxRetentionOptions, retentionOf } from './outbox-retention.js';
import type { WakeupSource } from './supervisor-wakeups.js';

/** Options of {@link StoreTransport}. */
export interface StoreTransportOptions {
  /** The stores whose outbox the consumers read (`stores.outbox` is required). */
  stores: Pick<Stores, 'outbox'>;
  /** How long a consumer's claim lasts unless renewed; renewed every third of it while handling (default: 30 000). */
  leaseMs?: number;
  /** How often an idle consumer looks for deliveries (default: 100). */
  pollIntervalMs?: number;
  /**
   * Backoff after a failed handling: a delay drawn from the upper half of
   * `min(maxMs, initialMs * 2^(attempt-1))` (`retryDelay`, default: 100 and 30 000).
   */
  retry?: { initialMs?: number; maxMs?: number };
  /**
   * Prune the deliveries consumers acked while any consumer runs (see
   * `OutboxRetentionOptions`), or `false` to keep them all (default: on, a day after they
   * were settled, every minute).
   */
  retention?: OutboxRetentionOptions | false;
  /** A source of outbox wake-ups (PostgreSQL's `stores.wakeups`, channel `outbox`) that cuts the poll short (default: none). */
  wakeups?: WakeupSource;
  /** Milliseconds since the epoch (default: `Date.now`). */
  clock?: () => number;
  /** Where errors of the consumers' loops go (default: `console.error`). */
  onError?: (error: unknown, context: string) => void;
}

/** The outbox wake-up channel (`WAKEUP_OUTBOX` of `@skein/store-postgres`). */
export const WAKEUP_CHANNEL_OUTBOX = 'outbox';

/**
 * A transport over the store's own outbox; it needs no publisher (`relays` is false).
 * @example
 * const transport = new StoreTransport({ stores });
 * const consumer = await transport.consume('execution.pending', async (message) => 'ack', { prefetch: 4 });
 * // …
 * await consumer.close();
 */
export class StoreTransport implements Transport {
  readonly relays = false;
  private readonly outbox: OutboxStore;
  private readonly leaseMs: number;
  private readonly pollIntervalMs: number;
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly clock: () => number;
  private readonly onError: (error: unknown, context: string) => void;
  private readonly consumers = new Set<StoreConsumer>();
  private closed = false;
  private readonly retention: OutboxRetention | undefined;

  constructor(private readonly options: StoreTransportOptions) {
    if (options?.stores?.outbox === undefined) throw new OutboxMissingError('StoreTransport');
    this.outbox = options.stores.outbox;
    this.leaseMs = options.leaseMs ?? 30_000;
    this.pollIntervalMs = options.pollIntervalMs ?? 100;
    this.initialMs = options.retry?.initialMs ?? 100;
    this.maxMs = options.retry?.maxMs ?? 30_000;
    this.clock = options.clock ?? Date.now;
    this.onError = options.onError ?? ((error, context) => console.error(`skein: ${context}:`, error));
    const issues = positive({ leaseMs: this.leaseMs, pollIntervalMs: this.pollIntervalMs });
    issues.push(...backoffIssues('retry', { initialMs: this.initialMs, maxMs: this.maxMs }));
    if (issues.length > 0) throw new InvalidInputError('StoreTransport options', issues);
    this.retention = retentionOf(
      this.outbox,
      options.retention,
      this.clock,
      this.onError,
      'StoreTransport options',
    );
  }

  /** Every message is in the outbox already: publishing confirms each at once. */
  async publish(messages: readonly TransportMessage[]): Promise<PublishOutcome[]> {
    if (this.closed) throw new TransportClosedError('StoreTransport', 'publish');
    return messages.map(() => ({ status: 'confirmed' }));
  }

  async consume(topic: string, handler: MessageHandler, options: ConsumeOptions = {}): Promise<Subscription> {
    if (this.closed) throw new TransportClosedError('StoreTransport', 'consume');
    const prefetch = options.prefetch ?? DEFAULT_PREFETCH;
    const maxAttempts = options.maxAttempts ?? DEFAULT_CONSUME_MAX_ATTEMPTS;
    const issues = positiveIntegers({ prefetch, maxAttempts });
    if (typeof topic !== 'string' || topic === '')
      issues.push({ path: 'topic', message: 'must be a non-empty string' });
    if (issues.length > 0) throw new InvalidInputError('StoreTransport.consume options', issues);
    const consumer = new StoreConsumer(this, topic, handler, prefetch, maxAttempts);
    this.consumers.add(consumer);
    await consumer.start(this.options.wakeups);
    this.retention?.start();
    return {
      close: async () => {
        await consumer.close();
        this.consumers.delete(consumer);
      },
    };
  }

  async quarantined(topic: string, limit = 100): Promise<QuarantinedMessage[]> {
    const found: QuarantinedMessage[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await this.outbox.list({ status: 'retired', limit: 500, ...(after ? { after } : {}) });
      for (const d of page) {
        if (d.topic !== topic) continue;
        const message: QuarantinedMessage = {
          id: d.id,
          topic: d.topic,
          payload: d.payload,
          reason: d.lastError ?? '',
        };
        if (d.key !== '') message.key = d.key;
        found.push(message);
        if (found.length >= limit) return found;
      }
      if (page.length < 500) return found;
      after = page[page.length - 1]!.id;
    }
  }

  /**
   * Delete the acked deliveries past their retention now (what the transport does every
   * `retention.intervalMs` while a consumer runs); returns how many. 0 with `retention: false`.
   */
  async prune(): Promise<number> {
    return (await this.retention?.pruneNow()) ?? 0;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.retention?.stop();
    await Promise.all([...this.consumers].map((consumer) => consumer.close()));
    this.consumers.clear();
  }

  /** @internal What the consumers share. */
  get settings() {
    return {
      outbox: this.outbox,
      leaseMs: this.leaseMs,
      pollIntervalMs: this.pollIntervalMs,
      clock: this.clock,
      onError: this.onError,
      backoff: (attempt: number) => retryDelay(attempt, { initialMs: this.initialMs, maxMs: this.maxMs }),
    };
  }
}

/** One consumer's loop: claim up to the free slots, handle each, settle each by its verdict. */
class StoreConsumer {
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private unsubscribe: (() => Promise<void>) | undefined;

  constructor(
    private readonly transport: StoreTransport,
    private readonly topic: string,
    private readonly handler: MessageHandler,
    private readonly prefetch: number,
    private readonly maxAttempts: number,
  ) {}

  async start(wakeups: WakeupSource | undefined): Promise<void> {
    if (wakeups !== undefined) {
      try {
        this.unsubscribe = await wakeups.subscribe(WAKEUP_CHANNEL_OUTBOX, () => this.wake?.());
      } catch (error) {
        this.transport.settings.onError(
          error,
          'StoreTransport: subscribe to outbox wake-ups (polling goes on)',
        );
      }
    }
    this.loop = this.run();
  }

  async close(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
    await Promise.allSettled([...this.inFlight]);
    await this.unsubscribe?.();
  }

  private async run(): Promise<void> {
    const { outbox, leaseMs, pollIntervalMs, clock, onError } = this.transport.settings;
    while (!this.stopped) {
      const free = this.prefetch - this.inFlight.size;
      let claimed: ClaimedDelivery[] = [];
      if (free > 0) {
        try {
          claimed = await outbox.claim({
            now: clock(),
            limit: free,
            leaseMs,
            topics: [this.topic],
            maxDeliveryAttempts: this.maxAttempts,
          });
        } catch (error) {
          onError(error, `StoreTransport: claim deliveries of "${this.topic}"`);
        }
      }
      for (const delivery of claimed) {
        const work = this.work(delivery).finally(() => {
          this.inFlight.delete(work);
          this.wake?.();
        });
        this.inFlight.add(work);
      }
      // A full page may mean more is waiting: look again at once while there are free slots.
      if (claimed.length > 0 && claimed.length === free) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollIntervalMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  /** Handle one delivery, renewing its claim meanwhile, then settle it. */
  private async work(delivery: ClaimedDelivery): Promise<void> {
    const { outbox, leaseMs, clock, onError, backoff } = this.transport.settings;
    const { id, claimToken: token } = delivery;
    const renewal = setInterval(
      () => {
        outbox.renew(id, token, clock(), leaseMs).catch((error: unknown) => {
          onError(error, `StoreTransport: renew the claim of message "${id}"`);
        });
      },
      Math.max(1, Math.floor(leaseMs / 3)),
    );
    renewal.unref?.();
    let outcome: Awaited<ReturnType<typeof handle>>;
    try {
      outcome = await handle(this.handler, messageOf(delivery));
    } finally {
      clearInterval(renewal);
    }
    try {
      const now = clock();
      if (outcome.verdict === 'ack') await outbox.markPublished(id, token, now);
      else if (outcome.verdict === 'quarantine') await outbox.retire(id, token, outcome.reason, now);
      else {
        const options = { availableAt: now + backoff(delivery.attempts), error: outcome.reason, now };
        await outbox.reschedule(id, token, { ...options, maxDeliveryAttempts: this.maxAttempts });
      }
    } catch (error) {
      // Unsettled, the claim lapses and the delivery comes back: at least once holds.
      onError(error, `StoreTransport: settle message "${id}"`);
    }
  }
}

function positive(values: Record<string, number>): { path: string; message: string }[] {
  return Object.entries(values)
    .filter(([, v]) => !(Number.isFinite(v) && v > 0))
    .map(([path, v]) => ({ path, message: `must be > 0, got ${v}` }));
}

function positiveIntegers(values: Record<string, number>): { path: string; message: string }[] {
  return Object.entries(values)
    .filter(([, v]) => !(Number.isSafeInteger(v) && v >= 1))
    .map(([path, v]) => ({ path, message: `must be an integer >= 1, got ${v}` }));
}
