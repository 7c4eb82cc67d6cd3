/**
 * Outbox retention (docs/outbox.md): the publisher and the store transport are what mark
 * deliveries published, so they are what prune them. Every `intervalMs` the outbox's
 * published deliveries settled more than `keepPublishedMs` ago are deleted with their ledger
 * rows, `batchSize` at a time, until none that old is left. Pending and retired deliveries
 * are never pruned.
 */
import { InvalidInputError, type OutboxStore } from '@skein/workflow-runtime';

/** Options of the outbox retention (`retention` of `OutboxPublisher` and `StoreTransport`). */
export interface OutboxRetentionOptions {
  /** How long a published delivery stays readable after it was settled, in ms (default: 86 400 000, a day). */
  keepPublishedMs?: number;
  /** Pause between prunes, in ms (default: 60 000). */
  intervalMs?: number;
  /** Rows one prune transaction deletes at most (default: 1 000). */
  batchSize?: number;
}

/** The pruning loop of one outbox; see the module comment. */
export class OutboxRetention {
  readonly keepPublishedMs: number;
  private readonly intervalMs: number;
  private readonly batchSize: number;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private stopped = true;

  constructor(
    private readonly outbox: OutboxStore,
    options: OutboxRetentionOptions,
    private readonly clock: () => number,
    private readonly onError: (error: unknown, context: string) => void,
    where: string,
  ) {
    this.keepPublishedMs = options.keepPublishedMs ?? 86_400_000;
    this.intervalMs = options.intervalMs ?? 60_000;
    this.batchSize = options.batchSize ?? 1_000;
    const issues: { path: string; message: string }[] = [];
    for (const [name, value] of Object.entries({
      keepPublishedMs: this.keepPublishedMs,
      intervalMs: this.intervalMs,
      batchSize: this.batchSize,
    }))
      if (!Number.isSafeInteger(value) || value < (name === 'keepPublishedMs' ? 0 : 1))
        issues.push({
          path: `retention.${name}`,
          message: `must be an integer >= ${name === 'keepPublishedMs' ? 0 : 1}, got ${value}`,
        });
    if (issues.length > 0) throw new InvalidInputError(where, issues);
  }

  /** Delete every published delivery settled more than `keepPublishedMs` ago; returns how many. */
  async pruneNow(): Promise<number> {
    const settledBefore = this.clock() - this.keepPublishedMs;
    let total = 0;
    for (;;) {
      const n = await this.outbox.prune({ settledBefore, limit: this.batchSize });
      total += n;
      if (n < this.batchSize) return total;
    }
  }

  /** Prune now and then every `intervalMs` until `stop()`. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.tick();
  }

  /** Stop pruning and wait for a prune in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private tick(): void {
    this.running = this.pruneNow()
      .catch((error) => this.onError(error, 'outbox retention: prune (tried again next interval)'))
      .finally(() => {
        if (!this.stopped) {
          this.timer = setTimeout(() => this.tick(), this.intervalMs);
          this.timer.unref?.();
        }
      });
  }
}

/** The retention an option asks for: none for `false`, the defaults for `undefined`. */
export function retentionOf(
  outbox: OutboxStore,
  option: OutboxRetentionOptions | false | undefined,
  clock: () => number,
  onError: (error: unknown, context: string) => void,
  where: string,
): OutboxRetention | undefined {
  return option === false ? undefined : new OutboxRetention(outbox, option ?? {}, clock, onError, where);
}
