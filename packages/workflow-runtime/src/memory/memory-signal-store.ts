/** In-memory {@link SignalStore}. */
import { maxPendingOf, pendingLimitOf } from '../signal-inbox.js';
import type {
  PendingSignalsQuery,
  SendSignalOptions,
  Signal,
  SignalSendOutcome,
  SignalStore,
} from '../spi.js';

/** One signal of an inbox; `position` is its place in send order. */
interface Entry {
  signal: Signal;
  position: number;
  consumed: boolean;
}

/** One execution's inbox: every id it took, and the waiting signals by name in send order. */
interface Inbox {
  byId: Map<string, Entry>;
  waitingByName: Map<string, Map<string, Entry>>;
  waiting: number;
}

/**
 * The signal inbox held in memory, in send order; everything is lost with the process. A
 * `pending` query by name walks only that name's waiting signals.
 */
export class MemorySignalStore implements SignalStore {
  private readonly inboxes = new Map<string, Inbox>();
  private nextPosition = 0;

  async send(signal: Signal, options?: SendSignalOptions): Promise<SignalSendOutcome> {
    const maxPending = maxPendingOf(options);
    const inbox = this.inboxOf(signal.executionId);
    if (inbox.byId.has(signal.signalId)) return 'duplicate';
    if (inbox.waiting >= maxPending) return 'inbox-full';
    const entry: Entry = { signal: { ...signal }, position: this.nextPosition++, consumed: false };
    inbox.byId.set(signal.signalId, entry);
    let named = inbox.waitingByName.get(signal.name);
    if (named === undefined) {
      named = new Map();
      inbox.waitingByName.set(signal.name, named);
    }
    named.set(signal.signalId, entry);
    inbox.waiting += 1;
    return 'sent';
  }

  async pending(executionId: string, query?: PendingSignalsQuery): Promise<Signal[]> {
    const limit = pendingLimitOf(query);
    const inbox = this.inboxes.get(executionId);
    if (inbox === undefined) return [];
    let after = -1;
    if (query?.after !== undefined) {
      const from = inbox.byId.get(query.after);
      if (from === undefined) return [];
      after = from.position;
    }
    const names = query?.names ?? [...inbox.waitingByName.keys()];
    const found: Entry[] = [];
    for (const name of new Set(names)) {
      // Each name's map is in send order: its first `limit` entries past `after` are enough.
      let taken = 0;
      for (const entry of inbox.waitingByName.get(name)?.values() ?? []) {
        if (entry.position <= after) continue;
        found.push(entry);
        if (++taken === limit) break;
      }
    }
    found.sort((a, b) => a.position - b.position);
    return found.slice(0, limit).map((entry) => ({ ...entry.signal }));
  }

  async complete(executionId: string, signalId: string): Promise<void> {
    const inbox = this.inboxes.get(executionId);
    const entry = inbox?.byId.get(signalId);
    if (inbox === undefined || entry === undefined || entry.consumed) return;
    entry.consumed = true;
    entry.signal = { ...entry.signal, payload: '' };
    const named = inbox.waitingByName.get(entry.signal.name);
    named?.delete(signalId);
    if (named?.size === 0) inbox.waitingByName.delete(entry.signal.name);
    inbox.waiting -= 1;
  }

  async clear(executionId: string): Promise<void> {
    this.inboxes.delete(executionId);
  }

  private inboxOf(executionId: string): Inbox {
    let inbox = this.inboxes.get(executionId);
    if (inbox === undefined) {
      inbox = { byId: new Map(), waitingByName: new Map(), waiting: 0 };
      this.inboxes.set(executionId, inbox);
    }
    return inbox;
  }
}
