/**
 * {@link QueueStore} on SQLite. A claim is one BEGIN IMMEDIATE transaction (read the live
 * slots and the rate window, pick with `planClaims`, take the slots), so the limits hold across
 * every process and runtime sharing the file; every other operation is one statement.
 */
import {
  type ClaimQueueOptions,
  compareQueueItems,
  planClaims,
  type QueueEnqueueResult,
  type QueueEntry,
  type QueueItem,
  type QueueItemRow,
  type QueueStore,
  queueEntryOf,
  queueItemOf,
} from '@skein/workflow-runtime/spi';
import type Database from 'better-sqlite3';

type Db = Database.Database;

/** Queue items and slots in SQLite, with the semantics of `MemoryQueueStore`. */
export class SqliteQueueStore implements QueueStore {
  private readonly statements: ReturnType<typeof prepare>;
  private readonly claimOnce: (options: ClaimQueueOptions) => QueueItem[];

  /** @param db an open connection with the schema migrated (see `openSqliteStores`). */
  constructor(db: Db) {
    const statements = prepare(db);
    this.statements = statements;
    this.claimOnce = db.transaction((options: ClaimQueueOptions) => claimIn(statements, options)).immediate;
  }

  async enqueue(item: QueueItem): Promise<QueueEnqueueResult> {
    const row = { ...item, deduplicationId: item.deduplicationId ?? null };
    if (this.statements.insert.run(row).changes === 1)
      return { executionId: item.executionId, created: true };
    const first =
      this.statements.byId.get(item.executionId) ??
      (item.deduplicationId === undefined
        ? undefined
        : this.statements.byDedup.get(item.queue, item.deduplicationId));
    // The conflicting row finished in between: the slot it held is free, so try once more.
    if (first === undefined) return this.enqueue(item);
    return { executionId: first.executionId, created: false };
  }

  async claim(options: ClaimQueueOptions): Promise<QueueItem[]> {
    return this.claimOnce(options);
  }

  async renew(owner: string, executionIds: readonly string[], ttlMs: number, now: number): Promise<string[]> {
    if (executionIds.length === 0) return [];
    return this.statements.renew
      .all(now + ttlMs, JSON.stringify(executionIds), owner, now)
      .map((row) => row.executionId);
  }

  async release(
    executionId: string,
    owner: string,
    to: { state: 'suspended' } | { state: 'queued'; availableAt: number },
  ): Promise<boolean> {
    const availableAt = to.state === 'queued' ? to.availableAt : null;
    return this.statements.release.run(to.state, availableAt, executionId, owner).changes === 1;
  }

  async requeue(executionId: string, availableAt: number): Promise<QueueEntry | null> {
    this.statements.requeue.run(availableAt, executionId);
    const row = this.statements.byId.get(executionId);
    return row === undefined ? null : queueEntryOf(row);
  }

  async finish(executionId: string): Promise<void> {
    this.statements.finish.run(executionId);
  }

  async admitting(executionIds: readonly string[]): Promise<string[]> {
    if (executionIds.length === 0) return [];
    return this.statements.admitting.all(JSON.stringify(executionIds)).map((row) => row.executionId);
  }

  async get(executionId: string): Promise<QueueEntry | null> {
    const row = this.statements.byId.get(executionId);
    return row === undefined ? null : queueEntryOf(row);
  }
}

/** The claim inside its transaction. */
function claimIn(statements: ReturnType<typeof prepare>, options: ClaimQueueOptions): QueueItem[] {
  const { queue, owner, now, limits } = options;
  const byPartition = new Map<string, number>();
  let total = 0;
  let mine = 0;
  for (const row of statements.live.all(owner, queue, now)) {
    total += row.count;
    if (row.mine === 1) mine += row.count;
    byPartition.set(row.partitionKey, (byPartition.get(row.partitionKey) ?? 0) + row.count);
  }
  let inWindow = 0;
  if (limits.rateLimit !== undefined) {
    const since = now - limits.rateLimit.periodMs;
    statements.pruneStarts.run(queue, since);
    inWindow = statements.startsSince.get(queue, since)?.count ?? 0;
  }
  const candidates = claimable(statements, options).sort((a, b) => compareQueueItems(a, b, options.priority));
  const cursor = statements.cursor.get(queue)?.lastPartition ?? null;
  const plan = planClaims({
    candidates,
    live: { total, owner: mine, byPartition, inWindow },
    limits,
    max: options.max,
    cursor,
    priority: options.priority,
  });
  for (const item of plan.chosen) {
    statements.take.run(owner, now + options.ttlMs, item.executionId);
    if (limits.rateLimit !== undefined) statements.start.run(queue, now);
  }
  if (plan.cursor !== cursor) statements.setCursor.run(queue, plan.cursor);
  return plan.chosen;
}

/**
 * Each partition's first `max` queued and available items in serving order, and every item
 * holding a lapsed slot. The partitions are walked one index seek at a time, and each one's
 * items read in index order, so a backlog of any size in one partition costs `max` rows.
 */
function claimable(statements: ReturnType<typeof prepare>, options: ClaimQueueOptions): QueueItem[] {
  const { queue, now, max } = options;
  const read = options.priority ? statements.partitionByPriority : statements.partitionByTime;
  const rows: QueueItemRow[] = [];
  let key = statements.firstPartition.get(queue)?.key;
  while (key !== undefined) {
    rows.push(...read.all(queue, key, now, max));
    key = statements.nextPartition.get(queue, key)?.key;
  }
  rows.push(...statements.lapsed.all(queue, now));
  return rows.map(queueItemOf);
}

const COLUMNS =
  'execution_id AS executionId, queue, partition_key AS partitionKey, priority, workflow, version, input, ' +
  'enqueued_at AS enqueuedAt, available_at AS availableAt, deduplication_id AS deduplicationId, state, owner, ' +
  'expires_at AS expiresAt';

/** A partition's first queued and available items in `order` (queue, partition key, now, limit). */
function partitionItems(
  db: Db,
  order: string,
): Database.Statement<[string, string, number, number], QueueItemRow> {
  return db.prepare(
    `SELECT ${COLUMNS} FROM skein_queue_items WHERE queue = ? AND state = 'queued' AND partition_key = ? ` +
      `AND available_at <= ? ORDER BY ${order} LIMIT ?`,
  );
}

function prepare(db: Db) {
  return {
    insert: db.prepare<Omit<QueueItem, 'deduplicationId'> & { deduplicationId: string | null }>(
      'INSERT INTO skein_queue_items (execution_id, queue, partition_key, priority, workflow, version, input, ' +
        'enqueued_at, available_at, deduplication_id, state) VALUES (@executionId, @queue, @partitionKey, @priority, ' +
        "@workflow, @version, @input, @enqueuedAt, @availableAt, @deduplicationId, 'queued') ON CONFLICT DO NOTHING",
    ),
    byId: db.prepare<[string], QueueItemRow>(
      `SELECT ${COLUMNS} FROM skein_queue_items WHERE execution_id = ?`,
    ),
    byDedup: db.prepare<[string, string], QueueItemRow>(
      `SELECT ${COLUMNS} FROM skein_queue_items WHERE queue = ? AND deduplication_id = ?`,
    ),
    /** Live slots by partition and whether the owner holds them (owner, queue, now). */
    live: db.prepare<[string, string, number], { partitionKey: string; mine: number; count: number }>(
      'SELECT partition_key AS partitionKey, owner = ? AS mine, count(*) AS count FROM skein_queue_items ' +
        "WHERE queue = ? AND state = 'running' AND expires_at > ? GROUP BY partition_key, mine",
    ),
    pruneStarts: db.prepare<[string, number]>(
      'DELETE FROM skein_queue_starts WHERE queue = ? AND started_at <= ?',
    ),
    startsSince: db.prepare<[string, number], { count: number }>(
      'SELECT count(*) AS count FROM skein_queue_starts WHERE queue = ? AND started_at > ?',
    ),
    firstPartition: db.prepare<[string], { key: string }>(
      "SELECT partition_key AS key FROM skein_queue_items WHERE queue = ? AND state = 'queued' " +
        'ORDER BY partition_key LIMIT 1',
    ),
    nextPartition: db.prepare<[string, string], { key: string }>(
      "SELECT partition_key AS key FROM skein_queue_items WHERE queue = ? AND state = 'queued' " +
        'AND partition_key > ? ORDER BY partition_key LIMIT 1',
    ),
    partitionByTime: partitionItems(db, 'enqueued_at, execution_id'),
    partitionByPriority: partitionItems(db, 'priority, enqueued_at, execution_id'),
    lapsed: db.prepare<[string, number], QueueItemRow>(
      `SELECT ${COLUMNS} FROM skein_queue_items WHERE queue = ? AND state = 'running' AND expires_at <= ?`,
    ),
    cursor: db.prepare<[string], { lastPartition: string | null }>(
      'SELECT last_partition AS lastPartition FROM skein_queue_cursors WHERE queue = ?',
    ),
    setCursor: db.prepare<[string, string | null]>(
      'INSERT INTO skein_queue_cursors (queue, last_partition) VALUES (?, ?) ' +
        'ON CONFLICT (queue) DO UPDATE SET last_partition = excluded.last_partition',
    ),
    take: db.prepare<[string, number, string]>(
      "UPDATE skein_queue_items SET state = 'running', owner = ?, expires_at = ? WHERE execution_id = ?",
    ),
    start: db.prepare<[string, number]>('INSERT INTO skein_queue_starts (queue, started_at) VALUES (?, ?)'),
    /** Extend live slots of the owner (expires at, ids as JSON, owner, now). */
    renew: db.prepare<[number, string, string, number], { executionId: string }>(
      'UPDATE skein_queue_items SET expires_at = ? WHERE execution_id IN (SELECT value FROM json_each(?)) ' +
        "AND owner = ? AND state = 'running' AND expires_at > ? RETURNING execution_id AS executionId",
    ),
    /** Give a slot back (state, available at or null to keep it, id, owner). */
    release: db.prepare<[string, number | null, string, string]>(
      'UPDATE skein_queue_items SET state = ?, available_at = coalesce(?, available_at), owner = NULL, ' +
        "expires_at = NULL WHERE execution_id = ? AND owner = ? AND state = 'running'",
    ),
    /** A suspended item due to resume waits for a slot again (available at, id). */
    requeue: db.prepare<[number, string]>(
      "UPDATE skein_queue_items SET state = 'queued', available_at = ? WHERE execution_id = ? " +
        "AND state = 'suspended'",
    ),
    finish: db.prepare<[string]>('DELETE FROM skein_queue_items WHERE execution_id = ?'),
    admitting: db.prepare<[string], { executionId: string }>(
      'SELECT execution_id AS executionId FROM skein_queue_items WHERE execution_id IN ' +
        "(SELECT value FROM json_each(?)) AND state IN ('queued', 'running')",
    ),
  };
}
