/**
 * {@link QueueStore} on PostgreSQL. A claim is one transaction on a connection of its own: it
 * locks the queue's cursor row (so claims of one queue take turns across every process), reads
 * the live slots and the rate window, picks with `planClaims`, and takes the slots. Every other
 * operation is one statement. Text holding U+0000 is refused with `NulInTextError` by `enqueue`.
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
import type pg from 'pg';
import type { Database, Query } from './database.js';
import { hasNul, refuseNul } from './nul-text.js';

/** Queue items and slots in PostgreSQL, with the semantics of `MemoryQueueStore`. */
export class PostgresQueueStore implements QueueStore {
  /** @param db the shared pool, with the schema migrated (see `openPostgresStores`). */
  constructor(private readonly db: Database) {}

  async enqueue(item: QueueItem): Promise<QueueEnqueueResult> {
    const texts: Record<string, string> = {
      'the queue name': item.queue,
      'the partition key': item.partitionKey,
      'the input': item.input,
    };
    if (item.deduplicationId !== undefined) texts['the deduplication id'] = item.deduplicationId;
    refuseNul('queues.enqueue', item.executionId, texts);
    const inserted = await this.db.query('queues.enqueue', insertItem(item));
    if ((inserted.rowCount ?? 0) === 1) return { executionId: item.executionId, created: true };
    const first = (await this.db.query<{ executionId: string }>('queues.enqueue', firstOf(item))).rows[0];
    // The conflicting row finished in between: try once more.
    if (first === undefined) return this.enqueue(item);
    return { executionId: first.executionId, created: false };
  }

  async claim(options: ClaimQueueOptions): Promise<QueueItem[]> {
    if (hasNul(options.queue) || hasNul(options.owner)) return [];
    const client = await this.db.pool.connect();
    let failed = true;
    try {
      await client.query('BEGIN');
      const chosen = await claimIn(client, options);
      await client.query('COMMIT');
      failed = false;
      return chosen;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      this.db.pool.release(client, failed);
    }
  }

  async renew(owner: string, executionIds: readonly string[], ttlMs: number, now: number): Promise<string[]> {
    if (executionIds.length === 0 || hasNul(owner)) return [];
    const ids = executionIds.filter((id) => !hasNul(id));
    const rows = await this.db.query<{ executionId: string }>(
      'queues.renew',
      renewSlots(owner, ids, ttlMs, now),
    );
    return rows.rows.map((row) => row.executionId);
  }

  async release(
    executionId: string,
    owner: string,
    to: { state: 'suspended' } | { state: 'queued'; availableAt: number },
  ): Promise<boolean> {
    if (hasNul(executionId) || hasNul(owner)) return false;
    const availableAt = to.state === 'queued' ? to.availableAt : null;
    const result = await this.db.query(
      'queues.release',
      releaseSlot(executionId, owner, to.state, availableAt),
    );
    return (result.rowCount ?? 0) === 1;
  }

  async requeue(executionId: string, availableAt: number): Promise<QueueEntry | null> {
    if (hasNul(executionId)) return null;
    const row = (
      await this.db.query<QueueItemRow>('queues.requeue', requeueSuspended(executionId, availableAt))
    ).rows[0];
    return row === undefined ? null : queueEntryOf(row);
  }

  async finish(executionId: string): Promise<void> {
    if (hasNul(executionId)) return;
    await this.db.query('queues.finish', {
      name: 'skein_queue_finish',
      text: 'DELETE FROM skein_queue_items WHERE execution_id = $1',
      values: [executionId],
    });
  }

  async admitting(executionIds: readonly string[]): Promise<string[]> {
    const ids = executionIds.filter((id) => !hasNul(id));
    if (ids.length === 0) return [];
    const rows = await this.db.query<{ executionId: string }>('queues.admitting', {
      name: 'skein_queue_admitting',
      text:
        'SELECT execution_id AS "executionId" FROM skein_queue_items ' +
        "WHERE execution_id = ANY($1::text[]) AND state IN ('queued', 'running')",
      values: [ids],
    });
    return rows.rows.map((row) => row.executionId);
  }

  async get(executionId: string): Promise<QueueEntry | null> {
    if (hasNul(executionId)) return null;
    const row = (await this.db.query<QueueItemRow>('queues.get', selectItem(executionId))).rows[0];
    return row === undefined ? null : queueEntryOf(row);
  }
}

/** The claim inside its transaction. */
async function claimIn(client: pg.Client, options: ClaimQueueOptions): Promise<QueueItem[]> {
  const { queue, owner, now, limits } = options;
  const cursor = (await client.query<{ lastPartition: string | null }>(lockCursor(queue))).rows[0]
    ?.lastPartition;
  const byPartition = new Map<string, number>();
  let total = 0;
  let mine = 0;
  const items: QueueItemRow[] = [];
  // The live slots and the claimable items in one statement (one snapshot, after the lock).
  const read = await client.query<ClaimReadRow>(claimRead(owner, queue, now, options.max, options.priority));
  for (const row of read.rows) {
    if (row.executionId !== null) {
      items.push(row as QueueItemRow);
      continue;
    }
    total += row.liveCount!;
    if (row.mine === true) mine += row.liveCount!;
    byPartition.set(row.partitionKey, (byPartition.get(row.partitionKey) ?? 0) + row.liveCount!);
  }
  let inWindow = 0;
  if (limits.rateLimit !== undefined)
    inWindow = (await client.query<{ count: number }>(pruneAndCount(queue, now - limits.rateLimit.periodMs)))
      .rows[0]!.count;
  const candidates = items.map(queueItemOf).sort((a, b) => compareQueueItems(a, b, options.priority));
  const plan = planClaims({
    candidates,
    live: { total, owner: mine, byPartition, inWindow },
    limits,
    max: options.max,
    cursor: cursor ?? null,
    priority: options.priority,
  });
  if (plan.chosen.length === 0) return [];
  const ids = plan.chosen.map((item) => item.executionId);
  const rated = limits.rateLimit === undefined ? 0 : ids.length;
  await client.query(takeSlots(queue, owner, now, options.ttlMs, ids, rated, plan.cursor));
  return plan.chosen;
}

/**
 * A row of `claimRead`: a claimable item (`executionId` set, `liveCount` and `mine` null), or
 * a count of live slots of one partition, held by the owner or not (every item column null
 * but `partitionKey`).
 */
type ClaimReadRow = Omit<QueueItemRow, 'executionId'> & {
  executionId: string | null;
  liveCount: number | null;
  mine: boolean | null;
};

const COLUMNS =
  'execution_id AS "executionId", queue, partition_key AS "partitionKey", priority, workflow, version, input, ' +
  'enqueued_at AS "enqueuedAt", available_at AS "availableAt", deduplication_id AS "deduplicationId", state, ' +
  'owner, expires_at AS "expiresAt"';

function insertItem(item: QueueItem): Query {
  return {
    name: 'skein_queue_enqueue',
    text:
      'INSERT INTO skein_queue_items (execution_id, queue, partition_key, priority, workflow, version, input, ' +
      "enqueued_at, available_at, deduplication_id, state) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'queued') " +
      'ON CONFLICT DO NOTHING',
    values: [
      item.executionId,
      item.queue,
      item.partitionKey,
      item.priority,
      item.workflow,
      item.version,
      item.input,
      item.enqueuedAt,
      item.availableAt,
      item.deduplicationId ?? null,
    ],
  };
}

/** The item an enqueue conflicted with: same execution id, or same deduplication id in the queue. */
function firstOf(item: QueueItem): Query {
  return {
    name: 'skein_queue_first_of',
    text:
      'SELECT execution_id AS "executionId" FROM skein_queue_items WHERE execution_id = $1 ' +
      'OR (queue = $2 AND deduplication_id = $3) ORDER BY execution_id = $1 DESC LIMIT 1',
    values: [item.executionId, item.queue, item.deduplicationId ?? null],
  };
}

function selectItem(executionId: string): Query {
  return {
    name: 'skein_queue_get',
    text: `SELECT ${COLUMNS} FROM skein_queue_items WHERE execution_id = $1`,
    values: [executionId],
  };
}

/** Create the queue's cursor row if needed and lock it until the transaction ends. */
function lockCursor(queue: string): Query {
  return {
    name: 'skein_queue_lock',
    text:
      'INSERT INTO skein_queue_cursors AS c (queue) VALUES ($1) ON CONFLICT (queue) DO UPDATE ' +
      'SET queue = c.queue RETURNING last_partition AS "lastPartition"',
    values: [queue],
  };
}

/** Drop hand-outs older than the window, and count the ones inside it. */
function pruneAndCount(queue: string, since: number): Query {
  return {
    name: 'skein_queue_window',
    text:
      'WITH pruned AS (DELETE FROM skein_queue_starts WHERE queue = $1 AND started_at <= $2) ' +
      'SELECT count(*)::int AS count FROM skein_queue_starts WHERE queue = $1 AND started_at > $2',
    values: [queue, since],
  };
}

/**
 * Each partition's first `limit` queued and available items in serving order, and every item
 * holding a lapsed slot; then the live slots by partition, and whether `owner` holds them (rows
 * with a null execution id). The partitions are walked one index seek at a time (a loose index
 * scan), and each partition's items read from its index order, so a backlog of any size in one
 * partition costs `limit` rows.
 */
function claimRead(owner: string, queue: string, now: number, limit: number, priority: boolean): Query {
  const order = priority ? 'priority, enqueued_at, execution_id' : 'enqueued_at, execution_id';
  return {
    name: priority ? 'skein_queue_claim_read_by_priority' : 'skein_queue_claim_read',
    text:
      'WITH RECURSIVE parts (key) AS (' +
      "(SELECT partition_key FROM skein_queue_items WHERE queue = $1 AND state = 'queued' ORDER BY partition_key LIMIT 1) " +
      "UNION ALL SELECT (SELECT i.partition_key FROM skein_queue_items i WHERE i.queue = $1 AND i.state = 'queued' " +
      'AND i.partition_key > parts.key ORDER BY i.partition_key LIMIT 1) FROM parts WHERE parts.key IS NOT NULL)' +
      `, items AS (SELECT c.* FROM parts CROSS JOIN LATERAL (SELECT ${COLUMNS} FROM skein_queue_items ` +
      "WHERE queue = $1 AND state = 'queued' AND partition_key = parts.key AND available_at <= $2 " +
      `ORDER BY ${order} LIMIT $3) AS c WHERE parts.key IS NOT NULL ` +
      `UNION ALL SELECT ${COLUMNS} FROM skein_queue_items WHERE queue = $1 AND state = 'running' AND expires_at <= $2) ` +
      'SELECT items.*, NULL::int AS "liveCount", NULL::boolean AS mine FROM items UNION ALL ' +
      `SELECT NULL, NULL, partition_key, ${Array(10).fill('NULL').join(', ')}, count(*)::int, owner = $4 ` +
      "FROM skein_queue_items WHERE queue = $1 AND state = 'running' AND expires_at > $2 " +
      'GROUP BY partition_key, owner = $4',
    values: [queue, now, limit, owner],
  };
}

/** Take the slots, record the hand-outs for the rate window, move the cursor: one statement. */
function takeSlots(
  queue: string,
  owner: string,
  now: number,
  ttlMs: number,
  ids: string[],
  rated: number,
  cursor: string | null,
): Query {
  return {
    name: 'skein_queue_take',
    text:
      "WITH taken AS (UPDATE skein_queue_items SET state = 'running', owner = $2, expires_at = $3 " +
      'WHERE execution_id = ANY($4::text[])), ' +
      'started AS (INSERT INTO skein_queue_starts (queue, started_at) SELECT $1, $5 FROM generate_series(1, $6)) ' +
      'UPDATE skein_queue_cursors SET last_partition = $7 WHERE queue = $1',
    values: [queue, owner, now + ttlMs, ids, now, rated, cursor],
  };
}

function renewSlots(owner: string, ids: string[], ttlMs: number, now: number): Query {
  return {
    name: 'skein_queue_renew',
    text:
      'UPDATE skein_queue_items SET expires_at = $3 WHERE execution_id = ANY($1::text[]) AND owner = $2 ' +
      `AND state = 'running' AND expires_at > $4 RETURNING execution_id AS "executionId"`,
    values: [ids, owner, now + ttlMs, now],
  };
}

/**
 * A suspended item becomes queued; returns the item after it: the moved row, or else the row as
 * it is (the outer read of a data-modifying CTE sees the rows as they were before it).
 */
function requeueSuspended(executionId: string, availableAt: number): Query {
  return {
    name: 'skein_queue_requeue',
    text:
      "WITH moved AS (UPDATE skein_queue_items SET state = 'queued', available_at = $2 " +
      `WHERE execution_id = $1 AND state = 'suspended' RETURNING ${COLUMNS}) ` +
      `SELECT * FROM moved UNION ALL SELECT ${COLUMNS} FROM skein_queue_items ` +
      'WHERE execution_id = $1 AND NOT EXISTS (SELECT 1 FROM moved)',
    values: [executionId, availableAt],
  };
}

function releaseSlot(executionId: string, owner: string, state: string, availableAt: number | null): Query {
  return {
    name: 'skein_queue_release',
    text:
      'UPDATE skein_queue_items SET state = $3, available_at = coalesce($4, available_at), owner = NULL, ' +
      "expires_at = NULL WHERE execution_id = $1 AND owner = $2 AND state = 'running'",
    values: [executionId, owner, state, availableAt],
  };
}
