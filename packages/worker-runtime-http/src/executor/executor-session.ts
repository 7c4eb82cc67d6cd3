/**
 * One session of an executor (E1): the heartbeat, the long poll that brings runs and
 * inspections, and the session's reconciliation worker. It ends when the hub says it cannot
 * act (revoked, expired, replaced, unknown), when no heartbeat got through within its TTL, or
 * when the executor stops; `close` joins the poll, the reconciler and the inspections in
 * progress, so nothing of the session runs after it.
 */
import type { DeliveringSession, DeliveryDeps } from './delivery.js';
import type { InspectRequest, RunOffer } from './executor-wire.js';
import type { HubClient, SessionGrant } from './hub-client.js';
import { inspectRow } from './inspection.js';
import type { ExecutorLogger } from './logger.js';
import { type PassBounds, Reconciler } from './reconciler.js';
import type { Binding, RetainedStore } from './retained-store.js';

/** What a session uses of its executor. */
export interface SessionHost {
  executorId: string;
  client: HubClient;
  store: RetainedStore;
  delivery: DeliveryDeps;
  bounds: PassBounds;
  logger: ExecutorLogger;
  pollWaitMs: number;
  /** A run the hub handed to this session. */
  onRun(offer: RunOffer, session: ExecutorSession): void;
}

/** A live session of an executor with its hub. */
export class ExecutorSession implements DeliveringSession {
  readonly binding: Binding;
  readonly executorId: string;
  /** Resolves with why the session ended. */
  readonly finished: Promise<string>;
  private why: string | null = null;
  private resolveFinished!: (why: string) => void;
  private readonly stop = new AbortController();
  private readonly reconciler: Reconciler;
  private readonly loops: Promise<void>[];
  private readonly inspecting = new Set<Promise<void>>();
  private lastBeat = Date.now();

  constructor(
    private readonly host: SessionHost,
    private readonly grant: SessionGrant,
  ) {
    this.binding = { incarnation: grant.incarnation, sessionId: grant.sessionId };
    this.executorId = host.executorId;
    this.finished = new Promise((resolve) => (this.resolveFinished = resolve));
    this.reconciler = new Reconciler(host.delivery, this, host.bounds);
    this.loops = [this.heartbeats(), this.polls()];
  }

  get live(): boolean {
    return this.why === null;
  }

  /** The hub said the session cannot act: end it. */
  lost(code: string): void {
    if (this.why !== null) return;
    this.why = code;
    this.stop.abort();
    this.resolveFinished(code);
  }

  /** End the session and join everything it runs; a live session is closed at the hub too. */
  async close(why = 'stopped'): Promise<void> {
    const wasLive = this.live;
    this.lost(why);
    if (wasLive) await this.host.client.closeSession(this.sender);
    await Promise.allSettled(this.loops);
    await this.reconciler.close();
    await Promise.allSettled([...this.inspecting]);
  }

  private get sender() {
    return { executorId: this.executorId, session: this.binding };
  }

  private async heartbeats(): Promise<void> {
    while (this.live) {
      await this.pause(this.grant.heartbeatMs);
      if (!this.live) return;
      try {
        const ended = await this.host.client.heartbeat(this.sender);
        if (ended !== null) return this.lost(ended);
        this.lastBeat = Date.now();
        this.reconciler.request();
      } catch (error) {
        this.host.logger.warn('heartbeat failed', { ...this.binding, error: String(error) });
        if (Date.now() - this.lastBeat > this.grant.ttlMs) return this.lost('session_expired');
      }
    }
  }

  private async polls(): Promise<void> {
    while (this.live) {
      try {
        const items = await this.host.client.poll(this.sender, this.host.pollWaitMs, this.stop.signal);
        if (typeof items === 'string') return this.lost(items);
        for (const item of items) {
          if (item.kind === 'run') this.host.onRun(item, this);
          else this.inspect(item);
        }
      } catch (error) {
        if (!this.live) return;
        this.host.logger.warn('poll failed', { ...this.binding, error: String(error) });
        await this.pause(Math.min(this.grant.heartbeatMs, 500));
      }
    }
  }

  private inspect(request: InspectRequest): void {
    const answer = inspectRow(this.host.store, this.live ? this.binding : null, request);
    const sent = this.host.client
      .answerInspection(this.sender, request.requestId, answer)
      .catch((error: unknown) => {
        this.host.logger.warn('inspection answer not delivered', {
          requestId: request.requestId,
          error: String(error),
        });
      });
    this.inspecting.add(sent);
    void sent.finally(() => this.inspecting.delete(sent));
  }

  /** Wait `ms`, or less when the session ends. */
  private pause(ms: number): Promise<void> {
    const signal = this.stop.signal;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
    });
  }
}
