/**
 * The hub's executor sessions (E1): one incarnation per hub process, one current session per
 * executor. A session lives while heartbeats arrive within its TTL; the hub may revoke it; a
 * new session of the same executor replaces it. Each session has a queue of work (runs to
 * accept, inspections to answer) that the executor's long poll takes.
 */
import { newId } from '@skein/workflow-runtime/internal';
import { WireCodes } from '../wire.js';
import type { InspectRequest, RunOffer } from './executor-wire.js';
import type { Binding } from './retained-store.js';

/** Work queued for a session. */
export type SessionItem = RunOffer | InspectRequest;

/** Why a session can no longer act. */
export type SessionEnded =
  | typeof WireCodes.SessionUnknown
  | typeof WireCodes.SessionRevoked
  | typeof WireCodes.SessionExpired
  | typeof WireCodes.SessionReplaced
  | typeof WireCodes.SessionClosed;

/** One session of one executor. */
export interface HubSession {
  executorId: string;
  packageVersion: string;
  binding: Binding;
  expiresAt: number;
  ended: SessionEnded | null;
  queue: SessionItem[];
  /** The long poll waiting for work, if any. */
  waiting: ((items: SessionItem[]) => void) | null;
}

/** The sessions of one hub incarnation. */
export class Sessions {
  /** This hub's incarnation: new on every construction, so a restarted hub knows no old session. */
  readonly incarnation = `hub-${newId()}`;
  private readonly byId = new Map<string, HubSession>();
  private readonly current = new Map<string, HubSession>();
  private cursor = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly clock: () => number,
    /** Told when a session ends with work it never took (so waiters can stop waiting). */
    private readonly onEnded: (session: HubSession, untaken: SessionItem[]) => void,
  ) {}

  /** A new session for `executorId`; its previous one is replaced. */
  open(executorId: string, packageVersion: string): HubSession {
    const previous = this.current.get(executorId);
    if (previous !== undefined) this.end(previous, WireCodes.SessionReplaced);
    const session: HubSession = {
      executorId,
      packageVersion,
      binding: { incarnation: this.incarnation, sessionId: `session-${newId()}` },
      expiresAt: this.clock() + this.ttlMs,
      ended: null,
      queue: [],
      waiting: null,
    };
    this.byId.set(session.binding.sessionId, session);
    this.current.set(executorId, session);
    return session;
  }

  /** The session `binding` names for `executorId`, or why it cannot act. */
  check(executorId: string, binding: Binding): HubSession | SessionEnded {
    const session = this.byId.get(binding.sessionId);
    if (
      binding.incarnation !== this.incarnation ||
      session === undefined ||
      session.executorId !== executorId
    )
      return WireCodes.SessionUnknown;
    this.expireIfDue(session);
    return session.ended ?? session;
  }

  /** Extend a live session; the session, or why it cannot act. */
  heartbeat(executorId: string, binding: Binding): HubSession | SessionEnded {
    const checked = this.check(executorId, binding);
    if (typeof checked === 'string') return checked;
    checked.expiresAt = this.clock() + this.ttlMs;
    return checked;
  }

  /** Revoke the current session of `executorId`; false when it has none live. */
  revoke(executorId: string): boolean {
    const session = this.live(executorId);
    if (session === undefined) return false;
    this.end(session, WireCodes.SessionRevoked);
    return true;
  }

  /** The executor ends its own session (it stops): what it never took is given back at once. */
  close(session: HubSession): void {
    if (session.ended === null) this.end(session, WireCodes.SessionClosed);
  }

  /** The live current session of `executorId`, if any. */
  live(executorId: string): HubSession | undefined {
    const session = this.current.get(executorId);
    if (session === undefined) return undefined;
    this.expireIfDue(session);
    return session.ended === null ? session : undefined;
  }

  /** A live session to hand a run to, taking turns; undefined when none is live. */
  pick(): HubSession | undefined {
    const live = [...this.current.keys()].flatMap((id) => this.live(id) ?? []);
    if (live.length === 0) return undefined;
    this.cursor = (this.cursor + 1) % live.length;
    return live[this.cursor];
  }

  /** Queue work for a session and wake its poll. */
  push(session: HubSession, item: SessionItem): void {
    session.queue.push(item);
    this.flush(session);
  }

  /** Take the session's queued work, waiting up to `waitMs` for some. */
  take(session: HubSession, waitMs: number): Promise<SessionItem[]> {
    if (session.queue.length > 0 || waitMs === 0 || session.ended !== null)
      return Promise.resolve(session.queue.splice(0));
    session.waiting?.([]);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        if (session.waiting === answer) session.waiting = null;
        resolve(session.queue.splice(0));
      }, waitMs);
      const answer = (items: SessionItem[]) => {
        clearTimeout(timer);
        resolve(items);
      };
      session.waiting = answer;
    });
  }

  /** End every session (the hub closes): their polls answer at once. */
  closeAll(): void {
    for (const session of this.current.values())
      if (session.ended === null) this.end(session, WireCodes.SessionRevoked);
  }

  /** Sweep sessions whose TTL passed (their untaken work is given back). */
  sweep(): void {
    for (const session of this.current.values()) this.expireIfDue(session);
  }

  private flush(session: HubSession): void {
    const waiting = session.waiting;
    if (waiting === null || session.queue.length === 0) return;
    session.waiting = null;
    waiting(session.queue.splice(0));
  }

  private expireIfDue(session: HubSession): void {
    if (session.ended === null && this.clock() > session.expiresAt)
      this.end(session, WireCodes.SessionExpired);
  }

  private end(session: HubSession, why: SessionEnded): void {
    session.ended = why;
    const untaken = session.queue.splice(0);
    const waiting = session.waiting;
    session.waiting = null;
    waiting?.([]);
    this.onEnded(session, untaken);
  }
}
