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
  checkListQuery,
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
  type AvailableRow,
  claimDeliveries,
  deleteMessages,
  deliveryOf,
  insertOutboxMessage,
  publishClaimed,
  renewDelivery,
  rescheduleDelivery,
  retireUnsettled,
  selectAvailable,
  selectDeliveries,
  selectDeliveriesIn,
  selectDelivery,
  selectPrunable,
  settleDelivery,
} from './outbox-queries.js';
import { relaxedCommits } from './relaxed-commit.js';

type SettleParams = {
  id: string;
  token: string | null;
  status: 'published' | 'retired';
  now: number;
  error: string | null;
};

/** The outbox of one SQLite file, with the semantics of `MemoryOutboxStore`. */
export class SqliteOutboxStore implements OutboxStore {
  private readonly insert: ReturnType<typeof insertOutboxMessage>;
  private readonly statements;
  private readonly claimTx: (options: ClaimDeliveriesOptions, now: number) => ClaimedDelivery[];
  private readonly writeTx: (messages: readonly OutboxMessage[]) => void;
  private readonly publishTx: (claims: readonly { id: string; token: string }[], now: number) => boolean[];
  private readonly rescheduleTx: (id: string, token: string, options: RescheduleOptions) => RescheduleOutcome;
  private readonly pruneTx: (before: number, limit: number) => number;
  private readonly settleNow: (params: SettleParams) => boolean;
  private readonly renewNow: (params: { id: string; token: string; until: number }) => boolean;

  /** @param db an open connection with the schema migrated (see `openSqliteStores`). */
  constructor(db: Database.Database) {
    this.insert = insertOutboxMessage(db);
    this.statements = {
      available: selectAvailable(db),
      claim: claimDeliveries(db),
      publish: publishClaimed(db),
      settle: settleDelivery(db),
      retireUnsettled: retireUnsettled(db),
      reschedule: rescheduleDelivery(db),
      renew: renewDelivery(db),
      one: selectDelivery(db),
      list: selectDeliveries(db),
      listIn: selectDeliveriesIn(db),
    };
    // Claims and settlements skip the fsync; messages keep the file's durability (relaxed-commit.ts).
    const relaxed = relaxedCommits(db);
    this.claimTx = relaxed(transaction(db, (options, now) => this.claimNow(options, now)));
    this.writeTx = transaction(db, (messages) => {
      for (const message of messages) this.insert(message);
    });
    this.publishTx = relaxed(transaction(db, (claims, now) => this.publishNow(claims, now)));
    this.rescheduleTx = relaxed(
      transaction(db, (id, token, options) => this.rescheduleNow(id, token, options)),
    );
    this.settleNow = relaxed((params: SettleParams) => this.statements.settle.run(params).changes > 0);
    this.renewNow = relaxed(
      (params: { id: string; token: string; until: number }) => this.statements.renew.run(params).changes > 0,
    );
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
    return this.settleNow({ id: messageId, token, status: 'published', now, error: null });
  }

  async markPublishedAll(claims: readonly { id: string; token: string }[], now: number): Promise<boolean[]> {
    return claims.length === 0 ? [] : this.publishTx(claims, now);
  }

  async reschedule(messageId: string, token: string, options: RescheduleOptions): Promise<RescheduleOutcome> {
    return this.rescheduleTx(messageId, token, options);
  }

  async retire(messageId: string, token: string, reason: string, now: number): Promise<boolean> {
    return this.settleNow({ id: messageId, token, status: 'retired', now, error: reason });
  }

  async renew(messageId: string, token: string, now: number, leaseMs: number): Promise<boolean> {
    return this.renewNow({ id: messageId, token, until: now + leaseMs });
  }

  async prune(options: PruneDeliveriesOptions): Promise<number> {
    const limit = checkPruneOptions(options);
    return this.pruneTx(options.settledBefore, limit);
  }

  async get(messageId: string): Promise<OutboxDelivery | null> {
    const row = this.statements.one.get(messageId);
    return row === undefined ? null : deliveryOf(row);
  }

  async list(query?: ListDeliveriesQuery): Promise<OutboxDelivery[]> {
    const { status, after, limit } = checkListQuery(query);
    const rows =
      status === null
        ? this.statements.list.all({ after, limit })
        : this.statements.listIn.all({ after, limit, status });
    return rows.map(deliveryOf);
  }

  /**
   * The claim's transaction: retire what its claimers never settled, claim the rest with one
   * statement per page, and hand out what the read found (no read-back).
   */
  private claimNow(options: ClaimDeliveriesOptions, now: number): ClaimedDelivery[] {
    const max = options.maxDeliveryAttempts ?? DEFAULT_MAX_DELIVERY_ATTEMPTS;
    const topics = options.topics === undefined ? null : JSON.stringify(options.topics);
    const token = newId();
    const until = now + options.leaseMs;
    const claimed: ClaimedDelivery[] = [];
    for (;;) {
      const want = options.limit - claimed.length;
      const rows = this.statements.available.all({ now, limit: want, topics });
      const take: AvailableRow[] = [];
      for (const row of rows) {
        if (row.attempts < max) take.push(row);
        else {
          const error = unsettledDiagnostic(row.attempts, row.lastError);
          this.statements.retireUnsettled.run({ id: row.id, now, error });
        }
      }
      if (take.length > 0) {
        this.statements.claim.run({ ids: JSON.stringify(take.map((row) => row.id)), token, until });
        for (const row of take) claimed.push(claimedOf(row, token, until));
      }
      // Retired rows made room: look again, until the page is full or nothing is left.
      if (take.length === rows.length || rows.length < want) break;
    }
    return claimed;
  }

  /**
   * Mark published what each token holds, one statement per token (a batch has one). When the
   * statement marked every id it was given, no id needs looking up.
   */
  private publishNow(claims: readonly { id: string; token: string }[], now: number): boolean[] {
    const token = claims[0]!.token;
    if (claims.every((claim) => claim.token === token)) {
      const ids = claims.map((claim) => claim.id);
      const marked = this.statements.publish.all({ ids: JSON.stringify(ids), token, now });
      if (marked.length === claims.length) return claims.map(() => true);
      const set = new Set(marked);
      return ids.map((id) => set.has(id));
    }
    const byToken = new Map<string, string[]>();
    for (const { id, token } of claims) {
      const ids = byToken.get(token);
      if (ids === undefined) byToken.set(token, [id]);
      else ids.push(id);
    }
    const marked = new Set<string>();
    for (const [token, ids] of byToken)
      for (const id of this.statements.publish.all({ ids: JSON.stringify(ids), token, now })) marked.add(id);
    return claims.map(({ id }) => marked.has(id));
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

/** The delivery a claim hands out for an available row it took (built whole: no spread per row). */
function claimedOf(row: AvailableRow, token: string, until: number): ClaimedDelivery {
  const claimed: ClaimedDelivery = {
    id: row.id,
    topic: row.topic,
    key: row.key,
    payload: row.payload,
    createdAt: row.createdAt,
    status: 'pending',
    availableAt: until,
    attempts: row.attempts + 1,
    claimToken: token,
    lastError: row.lastError,
    settledAt: null,
  };
  if (row.headers !== null) claimed.headers = JSON.parse(row.headers) as Record<string, string>;
  return claimed;
}
