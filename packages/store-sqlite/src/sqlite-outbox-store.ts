/**
 * {@link OutboxStore} on SQLite. A claim, a settlement and a write each run in one
 * BEGIN IMMEDIATE transaction, which holds the write lock, so a delivery is claimed by one
 * claimer at a time even across processes. The event store writes an append's messages with
 * the same statements inside the append's own transaction (O1).
 */
import { InvalidInputError, type OutboxStore } from '@skein/workflow-runtime';
import { newId } from '@skein/workflow-runtime/internal';
import {
  type ClaimDeliveriesOptions,
  type ClaimedDelivery,
  checkClaimOptions,
  checkOutboxMessages,
  checkPruneOptions,
  DEFAULT_MAX_DELIVERY_ATTEMPTS,
  exhaustedDiagnostic,
  type ListDeliveriesQuery,
  type OutboxDelivery,
  type OutboxMessage,
  type PruneDeliveriesOptions,
  type RescheduleOptions,
  type RescheduleOutcome,
  unsettledDiagnostic,
} from '@skein/workflow-runtime/spi';
import type Database from 'better-sqlite3';
import {
  claimDelivery,
  deleteMessages,
  deliveryOf,
  insertOutboxMessage,
  renewDelivery,
  rescheduleDelivery,
  retireUnsettled,
  selectAvailable,
  selectClaimed,
  selectDeliveries,
  selectDelivery,
  selectPrunable,
  settleDelivery,
} from './outbox-queries.js';

/** The outbox of one SQLite file, with the semantics of `MemoryOutboxStore`. */
export class SqliteOutboxStore implements OutboxStore {
  private readonly insert: ReturnType<typeof insertOutboxMessage>;
  private readonly statements;
  private readonly claimTx: (options: ClaimDeliveriesOptions, now: number) => ClaimedDelivery[];
  private readonly writeTx: (messages: readonly OutboxMessage[]) => void;
  private readonly publishTx: (claims: readonly { id: string; token: string }[], now: number) => boolean[];
  private readonly rescheduleTx: (id: string, token: string, options: RescheduleOptions) => RescheduleOutcome;
  private readonly pruneTx: (before: number, limit: number) => number;

  /** @param db an open connection with the schema migrated (see `openSqliteStores`). */
  constructor(db: Database.Database) {
    this.insert = insertOutboxMessage(db);
    this.statements = {
      available: selectAvailable(db),
      claim: claimDelivery(db),
      settle: settleDelivery(db),
      retireUnsettled: retireUnsettled(db),
      reschedule: rescheduleDelivery(db),
      renew: renewDelivery(db),
      one: selectDelivery(db),
      claimed: selectClaimed(db),
      list: selectDeliveries(db),
    };
    this.claimTx = transaction(db, (options, now) => this.claimNow(options, now));
    this.writeTx = transaction(db, (messages) => {
      for (const message of messages) this.insert(message);
    });
    this.publishTx = transaction(db, (claims, now) =>
      claims.map(
        ({ id, token }) =>
          this.statements.settle.run({ id, token, status: 'published', now, error: null }).changes > 0,
      ),
    );
    this.rescheduleTx = transaction(db, (id, token, options) => this.rescheduleNow(id, token, options));
    const prunable = selectPrunable(db);
    const remove = deleteMessages(db);
    this.pruneTx = transaction(db, (before, limit) => {
      const ids = prunable.all({ before, limit }).map((row) => row.id);
      if (ids.length > 0) remove(JSON.stringify(ids));
      return ids.length;
    });
  }

  async write(messages: readonly OutboxMessage[]): Promise<void> {
    checkOutboxMessages(messages);
    try {
      this.writeTx(messages);
    } catch (error) {
      if (isTakenMessageId(error))
        throw new InvalidInputError('outbox messages', [{ path: 'messageId', message: 'is taken' }], {
          cause: error,
        });
      throw error;
    }
  }

  async claim(options: ClaimDeliveriesOptions): Promise<ClaimedDelivery[]> {
    const now = checkClaimOptions(options);
    return this.claimTx(options, now);
  }

  async markPublished(messageId: string, token: string, now: number): Promise<boolean> {
    const params = { id: messageId, token, status: 'published' as const, now, error: null };
    return this.statements.settle.run(params).changes > 0;
  }

  async markPublishedAll(claims: readonly { id: string; token: string }[], now: number): Promise<boolean[]> {
    return claims.length === 0 ? [] : this.publishTx(claims, now);
  }

  async reschedule(messageId: string, token: string, options: RescheduleOptions): Promise<RescheduleOutcome> {
    return this.rescheduleTx(messageId, token, options);
  }

  async retire(messageId: string, token: string, reason: string, now: number): Promise<boolean> {
    const params = { id: messageId, token, status: 'retired' as const, now, error: reason };
    return this.statements.settle.run(params).changes > 0;
  }

  async renew(messageId: string, token: string, now: number, leaseMs: number): Promise<boolean> {
    return this.statements.renew.run({ id: messageId, token, until: now + leaseMs }).changes > 0;
  }

  async prune(options: PruneDeliveriesOptions): Promise<number> {
    const limit = checkPruneOptions(options);
    return this.pruneTx(options.settledBefore, limit);
  }

  async get(messageId: string): Promise<OutboxDelivery | null> {
    const row = this.statements.one.get(messageId);
    return row === undefined ? null : deliveryOf(row);
  }

  async list(query: ListDeliveriesQuery = {}): Promise<OutboxDelivery[]> {
    return this.statements.list
      .all({ status: query.status ?? null, after: query.after ?? '', limit: query.limit ?? 100 })
      .map(deliveryOf);
  }

  /** The claim's transaction: retire what its claimers never settled, claim the rest. */
  private claimNow(options: ClaimDeliveriesOptions, now: number): ClaimedDelivery[] {
    const max = options.maxDeliveryAttempts ?? DEFAULT_MAX_DELIVERY_ATTEMPTS;
    const topics = options.topics === undefined ? null : JSON.stringify(options.topics);
    const token = newId();
    const until = now + options.leaseMs;
    const order: string[] = [];
    for (;;) {
      const want = options.limit - order.length;
      const rows = this.statements.available.all({ now: now, limit: want, topics });
      let retired = 0;
      for (const row of rows) {
        if (row.attempts >= max) {
          const error = unsettledDiagnostic(row.attempts, row.lastError);
          this.statements.retireUnsettled.run({ id: row.id, now, error });
          retired += 1;
          continue;
        }
        this.statements.claim.run({ id: row.id, token, until });
        order.push(row.id);
      }
      // Retired rows made room: look again, until the page is full or nothing is left.
      if (retired === 0 || rows.length < want) break;
    }
    if (order.length === 0) return [];
    const byId = new Map(
      this.statements.claimed.all(JSON.stringify(order)).map((row) => [row.id, deliveryOf(row)]),
    );
    return order.map((id) => byId.get(id) as ClaimedDelivery);
  }

  private rescheduleNow(messageId: string, token: string, options: RescheduleOptions): RescheduleOutcome {
    const max = options.maxDeliveryAttempts ?? DEFAULT_MAX_DELIVERY_ATTEMPTS;
    const params = { id: messageId, token, at: options.availableAt, error: options.error, max };
    if (this.statements.reschedule.run(params).changes > 0) return 'rescheduled';
    const row = this.statements.one.get(messageId);
    if (row?.status !== 'pending' || row.claimToken !== token) return 'lost';
    const error = exhaustedDiagnostic(row.attempts, options.error);
    this.statements.settle.run({ id: messageId, token, status: 'retired', now: options.now, error });
    return 'retired';
  }
}

/** `fn` as one BEGIN IMMEDIATE transaction (the write lock from the start, across processes). */
function transaction<A extends unknown[], R>(
  db: Database.Database,
  fn: (...args: A) => R,
): (...args: A) => R {
  const tx = db.transaction(fn);
  return (...args: A) => tx.immediate(...args);
}

/** True for the primary-key failure of a reused message id. */
export function isTakenMessageId(error: unknown): boolean {
  return (
    error instanceof Error &&
    'code' in error &&
    error.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' &&
    error.message.includes('skein_outbox_')
  );
}
