/**
 * Prompt wake-ups of a `Supervisor`: a wake-up source (PostgreSQL `LISTEN`/`NOTIFY` through
 * `stores.wakeups` of `@skein/store-postgres`) turns a newly scheduled timer into a tick at its
 * due time, a newly sent signal into a targeted resume, and a newly enqueued execution into a
 * tick that claims it, instead of waiting for the next poll. A notification is a hint, never
 * the truth: the supervisor keeps polling every `tickIntervalMs`, which catches whatever a lost
 * notification missed.
 */

/** The channel a wake-up source notifies when a timer is scheduled; the payload is its `dueAt` (ms since the epoch). */
export const WAKEUP_CHANNEL_TIMERS = 'timers';
/** The channel a wake-up source notifies when a signal is sent; the payload is the execution id. */
export const WAKEUP_CHANNEL_SIGNALS = 'signals';
/** The channel a wake-up source notifies when an execution is enqueued (left `pending`); the payload is the execution id. */
export const WAKEUP_CHANNEL_PENDING = 'pending';

/**
 * Anything that delivers notifications by channel, such as `stores.wakeups` of
 * `@skein/store-postgres`. The supervisor listens to {@link WAKEUP_CHANNEL_TIMERS},
 * {@link WAKEUP_CHANNEL_SIGNALS} and {@link WAKEUP_CHANNEL_PENDING}.
 */
export interface WakeupSource {
  /**
   * Call `handler` with the payload of every notification on `channel`. Resolves once the
   * channel is listened to, with a function that ends the subscription.
   */
  subscribe(channel: string, handler: (payload: string) => void): Promise<() => Promise<void>>;
}

/** What the wake-ups act on: the supervisor's side. */
export interface WakeupTargets {
  clock(): number;
  /** Run a tick as soon as the current one (if any) is done. */
  tickSoon(): void;
  /** A signal for `executionId` arrived: resume it if it waits for it. */
  signalArrived(executionId: string): void;
  onError(error: unknown, context: string): void;
}

/**
 * How long a signal notification waits before the leader looks at the execution. The sender's
 * own node resumes the execution right after its inbox write; a resume racing it would take a
 * newer fence and fence out the sender's run even when it backs off (the run then waits for
 * lease expiry). After the grace the execution is found running and left alone, so the leader
 * only steps in for a sender that never woke it (it died, or does not run that workflow).
 */
export const SIGNAL_GRACE_MS = 250;
/** Timers due within 10 ms of each other share one tick. */
const GRANULARITY_MS = 10;
/** Timers due later than this are left to polling, so far-off timers hold no memory here. */
export const WAKEUP_HORIZON_MS = 3_600_000;

/** The subscriptions and due-time ticks of one supervisor; see the module comment. */
export class SupervisorWakeups {
  private readonly dueTicks = new Map<number, ReturnType<typeof setTimeout>>();
  private readonly signalChecks = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly unsubscribes: (() => Promise<void>)[] = [];
  private stopped = false;

  constructor(
    private readonly source: WakeupSource,
    private readonly targets: WakeupTargets,
  ) {}

  /** Subscribe to the three channels; rejects when a subscription fails (polling still works). */
  async start(): Promise<void> {
    this.stopped = false;
    const onTimer = (payload: string) => this.timerScheduled(payload);
    this.unsubscribes.push(await this.source.subscribe(WAKEUP_CHANNEL_TIMERS, onTimer));
    const onSignal = (payload: string) => this.signalSent(payload);
    this.unsubscribes.push(await this.source.subscribe(WAKEUP_CHANNEL_SIGNALS, onSignal));
    const onPending = () => this.enqueued();
    this.unsubscribes.push(await this.source.subscribe(WAKEUP_CHANNEL_PENDING, onPending));
  }

  /** Unsubscribe and forget the ticks scheduled for due timers. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of [...this.dueTicks.values(), ...this.signalChecks.values()]) clearTimeout(timer);
    this.dueTicks.clear();
    this.signalChecks.clear();
    const results = await Promise.allSettled(this.unsubscribes.splice(0).map((unsubscribe) => unsubscribe()));
    for (const result of results)
      if (result.status === 'rejected')
        this.targets.onError(result.reason, 'supervisor wake-ups: unsubscribe');
  }

  /**
   * An execution was enqueued: tick, which claims pending work. Every node's tick claims
   * pending executions (not only the leader's), so every node reacts; the claim (a lease,
   * then a re-read) lets exactly one of them run it. The payload is not needed: the tick lists
   * every pending execution, and `tickSoon` folds a burst into the tick in progress plus one.
   */
  private enqueued(): void {
    if (!this.stopped) this.targets.tickSoon();
  }

  /** A signal for execution `payload` was sent: look at it after the grace (once per burst). */
  private signalSent(executionId: string): void {
    if (this.stopped || executionId === '' || this.signalChecks.has(executionId)) return;
    const timer = setTimeout(() => {
      this.signalChecks.delete(executionId);
      if (!this.stopped) this.targets.signalArrived(executionId);
    }, SIGNAL_GRACE_MS);
    timer.unref?.();
    this.signalChecks.set(executionId, timer);
  }

  /** A timer due at `payload` was scheduled: tick at that time (at once if it is due). */
  private timerScheduled(payload: string): void {
    if (this.stopped) return;
    const dueAt = Number(payload);
    if (payload === '' || !Number.isFinite(dueAt)) {
      const error = new Error(`supervisor wake-ups: "${payload}" on channel "timers" is not a due time`);
      this.targets.onError(error, 'supervisor wake-ups');
      return;
    }
    const at = Math.ceil(dueAt / GRANULARITY_MS) * GRANULARITY_MS;
    const delay = at - this.targets.clock();
    if (delay <= 0) {
      this.targets.tickSoon();
      return;
    }
    if (delay > WAKEUP_HORIZON_MS || this.dueTicks.has(at)) return;
    const timer = setTimeout(() => {
      this.dueTicks.delete(at);
      // A tick before the clock reached `at` (setTimeout may run a millisecond early) would find nothing due.
      if (this.targets.clock() < at) this.timerScheduled(String(at));
      else this.targets.tickSoon();
    }, delay);
    timer.unref?.();
    this.dueTicks.set(at, timer);
  }
}
