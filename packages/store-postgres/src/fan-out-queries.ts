/** The fan-out tables' statements (migration 0011), one query per function. */
import type { ChunkRecord, FanOutRecord, ItemRecord, Placement } from '@skein/workflow-runtime/spi';
import type { Query } from './database.js';

const FAN_OUT_COLUMNS =
  'fan_out_id AS "fanOutId", execution_id AS "executionId", name, task, task_version AS "taskVersion", ' +
  'chunk_size AS "chunkSize", shards, required, max_attempts AS "maxAttempts", status, total, ' +
  'seeded_chunks AS "seededChunks", seeded_items AS "seededItems", creation_token AS "creationToken", ' +
  'creation_owner AS "creationOwner", creation_expires_at AS "creationExpiresAt", created_at AS "createdAt", ' +
  'dispatched_at AS "dispatchedAt", settled_at AS "settledAt", error, summary';

const CHUNK_COLUMNS =
  'fan_out_id AS "fanOutId", shard, chunk_id AS "chunkId", store_alias AS "storeAlias", ' +
  'first_index AS "firstIndex", size, write_epoch AS "writeEpoch", status, available_at AS "availableAt", ' +
  'lease_token AS "leaseToken", worker_id AS "workerId", lease_expires_at AS "leaseExpiresAt", claims, ' +
  'recoveries, processing_failures AS "processingFailures", max_attempts AS "maxAttempts", error';

const ITEM_COLUMNS =
  'fan_out_id AS "fanOutId", item_index AS "index", chunk_id AS "chunkId", shard, input, status, attempt, ' +
  'failures, attempt_id AS "attemptId", worker_id AS "workerId", attempt_expires_at AS "attemptExpiresAt", ' +
  'retry_at AS "retryAt", output, error, finished_at AS "finishedAt"';

/** One fan-out row, locked until the transaction ends. */
export function lockFanOutQuery(fanOutId: string): Query {
  return {
    name: 'skein_fan_out_lock',
    text: `SELECT ${FAN_OUT_COLUMNS} FROM skein_fan_outs WHERE fan_out_id = $1 FOR UPDATE`,
    values: [fanOutId],
  };
}

/** One fan-out row. */
export function selectFanOutQuery(fanOutId: string): Query {
  return {
    name: 'skein_fan_out_get',
    text: `SELECT ${FAN_OUT_COLUMNS} FROM skein_fan_outs WHERE fan_out_id = $1`,
    values: [fanOutId],
  };
}

/** Insert a fan-out row unless its id is taken (then no row comes back). */
export function insertFanOutQuery(row: FanOutRecord): Query {
  return {
    name: 'skein_fan_out_insert',
    text:
      'INSERT INTO skein_fan_outs (fan_out_id, execution_id, name, task, task_version, chunk_size, shards, required, ' +
      'max_attempts, status, total, seeded_chunks, seeded_items, creation_token, creation_owner, ' +
      'creation_expires_at, created_at, dispatched_at, settled_at, error, summary) VALUES ($1, $2, $3, $4, $5, $6, ' +
      '$7::text[], $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21) ' +
      'ON CONFLICT (fan_out_id) DO NOTHING RETURNING fan_out_id',
    values: [
      row.fanOutId,
      row.executionId,
      row.name,
      row.task,
      row.taskVersion,
      row.chunkSize,
      [...row.shards],
      row.required,
      row.maxAttempts,
      ...mutableFanOut(row),
      row.createdAt,
      row.dispatchedAt,
      row.settledAt,
      row.error,
      row.summary,
    ],
  };
}

function mutableFanOut(row: FanOutRecord): unknown[] {
  return [
    row.status,
    row.total,
    row.seededChunks,
    row.seededItems,
    row.creationToken,
    row.creationOwner,
    row.creationExpiresAt,
  ];
}

/** Write every column of a fan-out row that changes. */
export function updateFanOutQuery(row: FanOutRecord): Query {
  return {
    name: 'skein_fan_out_update',
    text:
      'UPDATE skein_fan_outs SET status = $2, total = $3, seeded_chunks = $4, seeded_items = $5, ' +
      'creation_token = $6, creation_owner = $7, creation_expires_at = $8, dispatched_at = $9, settled_at = $10, ' +
      'error = $11, summary = $12 WHERE fan_out_id = $1',
    values: [row.fanOutId, ...mutableFanOut(row), row.dispatchedAt, row.settledAt, row.error, row.summary],
  };
}

/** The placement ledger of a fan-out, in placement order. */
export function selectPlacementsQuery(fanOutId: string): Query {
  return {
    name: 'skein_fan_out_placements',
    text:
      'SELECT fan_out_id AS "fanOutId", shard, chunks, write_epoch AS "writeEpoch", dispatched ' +
      'FROM skein_fan_out_placements WHERE fan_out_id = $1 ORDER BY position',
    values: [fanOutId],
  };
}

/** Insert a fan-out's placements, at their positions. */
export function insertPlacementsQuery(placements: readonly Placement[]): Query {
  return {
    name: 'skein_fan_out_placements_insert',
    text:
      'INSERT INTO skein_fan_out_placements (fan_out_id, position, shard, chunks, write_epoch, dispatched) ' +
      'SELECT p.f, p.ordinality - 1, p.s, p.c, p.e, p.d ' +
      'FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[]) WITH ORDINALITY AS p (f, s, c, e, d)',
    values: [
      placements.map((p) => p.fanOutId),
      placements.map((p) => p.shard),
      placements.map((p) => p.chunks),
      placements.map((p) => p.writeEpoch),
      placements.map((p) => p.dispatched),
    ],
  };
}

/** Move a placement's dispatch cursor. */
export function updateDispatchedQuery(fanOutId: string, shard: string, dispatched: number): Query {
  return {
    name: 'skein_fan_out_dispatched',
    text: 'UPDATE skein_fan_out_placements SET dispatched = $3 WHERE fan_out_id = $1 AND shard = $2',
    values: [fanOutId, shard, dispatched],
  };
}

/** One chunk row, locked until the transaction ends when `lock`. */
export function selectChunkQuery(fanOutId: string, shard: string, chunkId: number, lock: boolean): Query {
  return {
    name: lock ? 'skein_fan_out_chunk_lock' : 'skein_fan_out_chunk',
    text:
      `SELECT ${CHUNK_COLUMNS} FROM skein_fan_out_chunks WHERE fan_out_id = $1 AND shard = $2 AND chunk_id = $3` +
      (lock ? ' FOR UPDATE' : ''),
    values: [fanOutId, shard, chunkId],
  };
}

/** Leased chunks whose lease expired by `now`, oldest expiry first, locked (skipping locked ones). */
export function lockExpiredQuery(now: number, limit: number): Query {
  return {
    name: 'skein_fan_out_expired',
    text:
      `SELECT ${CHUNK_COLUMNS} FROM skein_fan_out_chunks WHERE status = 'leased' AND lease_expires_at <= $1 ` +
      'ORDER BY lease_expires_at LIMIT $2 FOR UPDATE SKIP LOCKED',
    values: [now, limit],
  };
}

/** Insert a chunk row unless it exists (then no row comes back). */
export function insertChunkQuery(c: ChunkRecord): Query {
  return {
    name: 'skein_fan_out_chunk_insert',
    text:
      'INSERT INTO skein_fan_out_chunks (fan_out_id, shard, chunk_id, store_alias, first_index, size, write_epoch, ' +
      'status, available_at, lease_token, worker_id, lease_expires_at, claims, recoveries, processing_failures, ' +
      'max_attempts, error) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) ' +
      'ON CONFLICT DO NOTHING RETURNING chunk_id',
    values: [
      c.fanOutId,
      c.shard,
      c.chunkId,
      c.storeAlias,
      c.firstIndex,
      c.size,
      c.writeEpoch,
      c.status,
      c.availableAt,
      c.leaseToken,
      c.workerId,
      c.leaseExpiresAt,
      c.claims,
      c.recoveries,
      c.processingFailures,
      c.maxAttempts,
      c.error,
    ],
  };
}

/** Write every column of a chunk row that changes. */
export function updateChunkQuery(c: ChunkRecord): Query {
  return {
    name: 'skein_fan_out_chunk_update',
    text:
      'UPDATE skein_fan_out_chunks SET status = $4, available_at = $5, lease_token = $6, worker_id = $7, ' +
      'lease_expires_at = $8, claims = $9, recoveries = $10, processing_failures = $11, error = $12 ' +
      'WHERE fan_out_id = $1 AND shard = $2 AND chunk_id = $3',
    values: [
      c.fanOutId,
      c.shard,
      c.chunkId,
      c.status,
      c.availableAt,
      c.leaseToken,
      c.workerId,
      c.leaseExpiresAt,
      c.claims,
      c.recoveries,
      c.processingFailures,
      c.error,
    ],
  };
}

/** Items of a fan-out with index in `[from, to)`, by index. */
export function selectItemRangeQuery(fanOutId: string, from: number, to: number): Query {
  return {
    name: 'skein_fan_out_item_range',
    text:
      `SELECT ${ITEM_COLUMNS} FROM skein_fan_out_items WHERE fan_out_id = $1 AND item_index >= $2 ` +
      'AND item_index < $3 ORDER BY item_index',
    values: [fanOutId, from, to],
  };
}

/** A page of a fan-out's items after an index, by index. */
export function selectItemPageQuery(fanOutId: string, after: number, limit: number): Query {
  return {
    name: 'skein_fan_out_item_page',
    text:
      `SELECT ${ITEM_COLUMNS} FROM skein_fan_out_items WHERE fan_out_id = $1 AND item_index > $2 ` +
      'ORDER BY item_index LIMIT $3',
    values: [fanOutId, after, limit],
  };
}

/** Insert new item rows (pending, no attempt yet). */
export function insertItemsQuery(items: readonly ItemRecord[]): Query {
  return {
    name: 'skein_fan_out_items_insert',
    text:
      'INSERT INTO skein_fan_out_items (fan_out_id, item_index, chunk_id, shard, input, status, attempt, failures) ' +
      'SELECT i.f, i.x, i.c, i.s, i.input, i.status, 0, 0 ' +
      'FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::text[]) ' +
      'AS i (f, x, c, s, input, status)',
    values: [
      items.map((i) => i.fanOutId),
      items.map((i) => i.index),
      items.map((i) => i.chunkId),
      items.map((i) => i.shard),
      items.map((i) => i.input),
      items.map((i) => i.status),
    ],
  };
}

/** Write every column that changes of many item rows of one fan-out, in one statement. */
export function updateItemsQuery(fanOutId: string, items: readonly ItemRecord[]): Query {
  return {
    name: 'skein_fan_out_items_update',
    text:
      'UPDATE skein_fan_out_items t SET status = u.status, attempt = u.attempt, failures = u.failures, ' +
      'attempt_id = u.attempt_id, worker_id = u.worker_id, attempt_expires_at = u.attempt_expires_at, ' +
      'retry_at = u.retry_at, output = u.output, error = u.error, finished_at = u.finished_at ' +
      'FROM unnest($2::bigint[], $3::text[], $4::int[], $5::int[], $6::text[], $7::text[], $8::bigint[], ' +
      '$9::bigint[], $10::text[], $11::text[], $12::bigint[]) AS u (item_index, status, attempt, failures, ' +
      'attempt_id, worker_id, attempt_expires_at, retry_at, output, error, finished_at) ' +
      'WHERE t.fan_out_id = $1 AND t.item_index = u.item_index',
    values: [
      fanOutId,
      items.map((i) => i.index),
      items.map((i) => i.status),
      items.map((i) => i.attempt),
      items.map((i) => i.failures),
      items.map((i) => i.attemptId),
      items.map((i) => i.workerId),
      items.map((i) => i.attemptExpiresAt),
      items.map((i) => i.retryAt),
      items.map((i) => i.output),
      items.map((i) => i.error),
      items.map((i) => i.finishedAt),
    ],
  };
}

/** Counts of a fan-out's chunks in this schema, by status. */
export function chunkCountsQuery(fanOutId: string): Query {
  return {
    name: 'skein_fan_out_chunk_counts',
    text: 'SELECT status, count(*)::bigint AS n FROM skein_fan_out_chunks WHERE fan_out_id = $1 GROUP BY status',
    values: [fanOutId],
  };
}

/** Counts of a fan-out's chunks and items in this schema, by kind and status. */
export function countsQuery(fanOutId: string): Query {
  return {
    name: 'skein_fan_out_counts',
    text:
      "SELECT 'chunks' AS kind, status, count(*)::bigint AS n FROM skein_fan_out_chunks WHERE fan_out_id = $1 " +
      "GROUP BY status UNION ALL SELECT 'items', status, count(*)::bigint FROM skein_fan_out_items " +
      'WHERE fan_out_id = $1 GROUP BY status',
    values: [fanOutId],
  };
}
