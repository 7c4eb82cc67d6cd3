/**
 * {@link OutboxStore} on PostgreSQL; every operation is one statement. Claims lock their rows
 * with `FOR UPDATE SKIP LOCKED`, so claimers on many machines take disjoint deliveries. The
 * event store writes an append's messages inside the append statement itself (O1).
 */
import { InvalidInputError, type OutboxStore } from '@skein/workflow-runtime';
import { newId } from '@skein/workflow-runtime/internal';
import {
  type ClaimDeliveriesOptions,
  type ClaimedDelivery,
  checkClaimOptions,
  checkListQuery,
  checkOutboxMessages,
  checkPruneOptions,
  DEFAULT_MAX_DELIVERY_ATTEMPTS,
  type ListDeliveriesQuery,
  type OutboxDelivery,
  type OutboxMessage,
  type PruneDeliveriesOptions,
  type RescheduleOptions,
  type RescheduleOutcome,
} from '@skein/workflow-runtime/spi';
import type { Database } from './database.js';
import { isUniqueViolation, NulInTextError } from './errors.js';
import { hasNul } from './nul-text.js';
import {
  type ClaimedRow,
  claimQuery,
  type DeliveryRow,
  deliveryOf,
  listDeliveriesQuery,
  pruneQuery,
  publishAllQuery,
  renewQuery,
  rescheduleQuery,
  selectDeliveryQuery,
  settleQuery,
  writeMessagesQuery,
} from './outbox-queries.js';
import { channelName } from './wakeups.js';

/**
 * The wake-up channel the outbox notifies when messages are written (by an append or by
 * `write`), delivered at commit; an `OutboxPublisher` may listen to it. The payload is empty.
 */
export const WAKEUP_OUTBOX = 'outbox';

/** The outbox in PostgreSQL, with the semantics of `MemoryOutboxStore`. */
export class PostgresOutboxStore implements OutboxStore {
  private readonly channel: string;

  /** @param db the shared pool, with the schema migrated (see `openPostgresStores`). */
  constructor(private readonly db: Database) {
    this.channel = channelName(db.schema, WAKEUP_OUTBOX);
  }

  async write(messages: readonly OutboxMessage[]): Promise<void> {
    checkOutboxMessages(messages);
    refuseNulIn(messages, 'outbox.write');
    if (messages.length === 0) return;
    try {
      await this.db.query('outbox.write', writeMessagesQuery(messages, this.channel));
    } catch (error) {
      if (isUniqueViolation(error))
        throw new InvalidInputError('outbox messages', [{ path: 'messageId', message: 'is taken' }], {
          cause: error,
        });
      throw error;
    }
  }

  async claim(options: ClaimDeliveriesOptions): Promise<ClaimedDelivery[]> {
    const now = checkClaimOptions(options);
    const max = options.maxDeliveryAttempts ?? DEFAULT_MAX_DELIVERY_ATTEMPTS;
    const until = now + options.leaseMs;
    const topics = options.topics === undefined ? null : [...options.topics];
    const token = newId();
    const query = claimQuery(now, options.limit, token, until, max, topics);
    const rows = (await this.db.query<ClaimedRow>('outbox.claim', query)).rows;
    return rows.map((row) => claimedOf(row, token, until));
  }

  async markPublished(messageId: string, token: string, now: number): Promise<boolean> {
    const query = settleQuery(messageId, token, 'published', now, null);
    return ((await this.db.query('outbox.markPublished', query)).rowCount ?? 0) > 0;
  }

  async markPublishedAll(claims: readonly { id: string; token: string }[], now: number): Promise<boolean[]> {
    if (claims.length === 0) return [];
    const rows = (
      await this.db.query<{ id: string }>('outbox.markPublishedAll', publishAllQuery(claims, now))
    ).rows;
    const marked = new Set(rows.map((row) => row.id));
    return claims.map((claim) => marked.has(claim.id));
  }

  async reschedule(messageId: string, token: string, options: RescheduleOptions): Promise<RescheduleOutcome> {
    const max = options.maxDeliveryAttempts ?? DEFAULT_MAX_DELIVERY_ATTEMPTS;
    const error = withoutNul(options.error);
    const query = rescheduleQuery(messageId, token, options.availableAt, error, max, options.now);
    const row = (await this.db.query<{ status: string }>('outbox.reschedule', query)).rows[0];
    if (row === undefined) return 'lost';
    return row.status === 'retired' ? 'retired' : 'rescheduled';
  }

  async retire(messageId: string, token: string, reason: string, now: number): Promise<boolean> {
    const query = settleQuery(messageId, token, 'retired', now, withoutNul(reason));
    return ((await this.db.query('outbox.retire', query)).rowCount ?? 0) > 0;
  }

  async renew(messageId: string, token: string, now: number, leaseMs: number): Promise<boolean> {
    return (
      ((await this.db.query('outbox.renew', renewQuery(messageId, token, now + leaseMs))).rowCount ?? 0) > 0
    );
  }

  async prune(options: PruneDeliveriesOptions): Promise<number> {
    const limit = checkPruneOptions(options);
    const query = pruneQuery(options.settledBefore, limit);
    return (await this.db.query<{ pruned: number }>('outbox.prune', query)).rows[0]!.pruned;
  }

  async get(messageId: string): Promise<OutboxDelivery | null> {
    return (
      (await this.db.query<DeliveryRow>('outbox.get', selectDeliveryQuery(messageId))).rows.map(
        deliveryOf,
      )[0] ?? null
    );
  }

  async list(query?: ListDeliveriesQuery): Promise<OutboxDelivery[]> {
    const { status, after, limit } = checkListQuery(query);
    const q = listDeliveriesQuery(status, after, limit);
    return (await this.db.query<DeliveryRow>('outbox.list', q)).rows.map(deliveryOf);
  }
}

/** The delivery a claim hands out for a row it took (built whole: no spread per row). */
function claimedOf(row: ClaimedRow, token: string, until: number): ClaimedDelivery {
  const claimed: ClaimedDelivery = {
    id: row.id,
    topic: row.topic,
    key: row.key,
    payload: row.payload,
    createdAt: row.createdAt,
    status: 'pending',
    availableAt: until,
    attempts: row.attempts,
    claimToken: token,
    lastError: row.lastError,
    settledAt: null,
  };
  if (row.headers !== null) claimed.headers = JSON.parse(row.headers) as Record<string, string>;
  return claimed;
}

/** Refuse a message whose text holds U+0000 (PostgreSQL `text` cannot store it). */
export function refuseNulIn(
  messages: readonly OutboxMessage[],
  operation: string,
  executionId?: string,
): void {
  messages.forEach((m, i) => {
    for (const field of MESSAGE_TEXTS)
      if (hasNul(m[field])) throw new NulInTextError(executionId, `outbox[${i}].${field}`, operation);
  });
}

/** The text fields of a message that its rows store (headers are printable ASCII: checked before). */
const MESSAGE_TEXTS = ['id', 'topic', 'key', 'payload'] as const;

/** A diagnostic as `text` can hold it: U+0000 shown as an escape. */
function withoutNul(text: string): string {
  return text.replaceAll('\u0000', '\\u0000');
}
