/** In-memory {@link OutboxStore}: the reference implementation, for tests and examples. */
import { InvalidInputError } from '../errors.js';
import { newId } from '../ids.js';
import {
  type ClaimDeliveriesOptions,
  type ClaimedDelivery,
  checkClaimOptions,
  checkListQuery,
  checkOutboxMessages,
  checkPruneOptions,
  DEFAULT_MAX_DELIVERY_ATTEMPTS,
  exhaustedDiagnostic,
  type ListDeliveriesQuery,
  type OutboxDelivery,
  type OutboxMessage,
  type OutboxStore,
  type PruneDeliveriesOptions,
  type RescheduleOptions,
  type RescheduleOutcome,
  unsettledDiagnostic,
} from '../outbox.js';

/** The outbox held in memory; the memory event store writes an append's messages here atomically. */
export class MemoryOutboxStore implements OutboxStore {
  private readonly deliveries = new Map<string, OutboxDelivery>();

  async write(messages: readonly OutboxMessage[]): Promise<void> {
    checkOutboxMessages(messages);
    const taken = this.takenId(messages);
    if (taken !== undefined)
      throw new InvalidInputError('outbox messages', [{ path: 'messageId', message: `"${taken}" is taken` }]);
    this.insert(messages);
  }

  /** The first message id of `messages` the ledger already holds, if any (checked before any write). */
  takenId(messages: readonly OutboxMessage[]): string | undefined {
    return messages.find((message) => this.deliveries.has(message.id))?.id;
  }

  /** Insert checked messages; synchronous, so an append's events and messages land in one step. */
  insert(messages: readonly OutboxMessage[]): void {
    for (const message of messages) {
      this.deliveries.set(message.id, {
        id: message.id,
        topic: message.topic,
        key: message.key,
        payload: message.payload,
        createdAt: message.createdAt,
        status: 'pending',
        availableAt: message.availableAt ?? message.createdAt,
        attempts: 0,
        claimToken: null,
        lastError: null,
        settledAt: null,
        ...headersOf(message),
      });
    }
  }

  async claim(options: ClaimDeliveriesOptions): Promise<ClaimedDelivery[]> {
    const now = checkClaimOptions(options);
    const max = options.maxDeliveryAttempts ?? DEFAULT_MAX_DELIVERY_ATTEMPTS;
    const topics = options.topics === undefined ? undefined : new Set(options.topics);
    const available = [...this.deliveries.values()]
      .filter((row) => row.status === 'pending' && row.availableAt <= now)
      .filter((row) => topics === undefined || topics.has(row.topic))
      .sort((a, b) => a.availableAt - b.availableAt || compare(a.id, b.id));
    const token = newId();
    const claimed: ClaimedDelivery[] = [];
    for (const row of available) {
      if (claimed.length === options.limit) break;
      if (row.attempts >= max) {
        settle(row, 'retired', now, unsettledDiagnostic(row.attempts, row.lastError));
        continue;
      }
      row.attempts += 1;
      row.claimToken = token;
      row.availableAt = now + options.leaseMs;
      claimed.push({ ...row, status: 'pending', claimToken: token });
    }
    return claimed;
  }

  async markPublished(messageId: string, token: string, now: number): Promise<boolean> {
    const row = this.current(messageId, token);
    if (row === undefined) return false;
    settle(row, 'published', now, row.lastError);
    return true;
  }

  async markPublishedAll(claims: readonly { id: string; token: string }[], now: number): Promise<boolean[]> {
    const answers: boolean[] = [];
    for (const { id, token } of claims) answers.push(await this.markPublished(id, token, now));
    return answers;
  }

  async reschedule(messageId: string, token: string, options: RescheduleOptions): Promise<RescheduleOutcome> {
    const row = this.current(messageId, token);
    if (row === undefined) return 'lost';
    if (row.attempts >= (options.maxDeliveryAttempts ?? DEFAULT_MAX_DELIVERY_ATTEMPTS)) {
      settle(row, 'retired', options.now, exhaustedDiagnostic(row.attempts, options.error));
      return 'retired';
    }
    row.claimToken = null;
    row.availableAt = options.availableAt;
    row.lastError = options.error;
    return 'rescheduled';
  }

  async retire(messageId: string, token: string, reason: string, now: number): Promise<boolean> {
    const row = this.current(messageId, token);
    if (row === undefined) return false;
    settle(row, 'retired', now, reason);
    return true;
  }

  async renew(messageId: string, token: string, now: number, leaseMs: number): Promise<boolean> {
    const row = this.current(messageId, token);
    if (row === undefined) return false;
    row.availableAt = now + leaseMs;
    return true;
  }

  async prune(options: PruneDeliveriesOptions): Promise<number> {
    const limit = checkPruneOptions(options);
    const old = [...this.deliveries.values()]
      .filter((row) => row.status === 'published' && (row.settledAt ?? 0) < options.settledBefore)
      .sort((a, b) => compare(a.id, b.id))
      .slice(0, limit);
    for (const row of old) this.deliveries.delete(row.id);
    return old.length;
  }

  async get(messageId: string): Promise<OutboxDelivery | null> {
    const row = this.deliveries.get(messageId);
    return row === undefined ? null : { ...row };
  }

  async list(query?: ListDeliveriesQuery): Promise<OutboxDelivery[]> {
    const { status, after, limit } = checkListQuery(query);
    return [...this.deliveries.values()]
      .filter((row) => status === null || row.status === status)
      .filter((row) => compare(row.id, after) > 0)
      .sort((a, b) => compare(a.id, b.id))
      .slice(0, limit)
      .map((row) => ({ ...row }));
  }

  /** The pending delivery `messageId` if `token` is its current claim. */
  private current(messageId: string, token: string): OutboxDelivery | undefined {
    const row = this.deliveries.get(messageId);
    return row?.status === 'pending' && row.claimToken === token ? row : undefined;
  }
}

function settle(
  row: OutboxDelivery,
  status: 'published' | 'retired',
  now: number,
  error: string | null,
): void {
  row.status = status;
  row.claimToken = null;
  row.settledAt = now;
  row.lastError = error;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The `headers` field of a delivery: a copy of the message's, absent when it has none. */
function headersOf(message: OutboxMessage): { headers?: Readonly<Record<string, string>> } {
  const headers = message.headers;
  return headers === undefined || Object.keys(headers).length === 0 ? {} : { headers: { ...headers } };
}
