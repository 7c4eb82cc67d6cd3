/** The fan-out tables' statements (migration 0011), one query per function, each prepared once. */
import {
  type ChunkRecord,
  emptyCounts,
  type FanOutCounts,
  type FanOutRecord,
  type ItemRecord,
  type Placement,
} from '@skein/workflow-runtime/spi';
import type Database from 'better-sqlite3';

type Db = Database.Database;

/** A fan-out row as SQLite holds it: shards as JSON, `required` as 0 or 1. */
type FanOutRow = Omit<FanOutRecord, 'shards' | 'required'> & { shards: string; required: number };

const FAN_OUT_COLUMNS =
  'fan_out_id AS fanOutId, execution_id AS executionId, name, task, task_version AS taskVersion, ' +
  'chunk_size AS chunkSize, shards, required, max_attempts AS maxAttempts, status, total, ' +
  'seeded_chunks AS seededChunks, seeded_items AS seededItems, creation_token AS creationToken, ' +
  'creation_owner AS creationOwner, creation_expires_at AS creationExpiresAt, created_at AS createdAt, ' +
  'dispatched_at AS dispatchedAt, settled_at AS settledAt, error, summary';

const CHUNK_COLUMNS =
  'fan_out_id AS fanOutId, shard, chunk_id AS chunkId, store_alias AS storeAlias, first_index AS firstIndex, ' +
  'size, write_epoch AS writeEpoch, status, available_at AS availableAt, lease_token AS leaseToken, ' +
  'worker_id AS workerId, lease_expires_at AS leaseExpiresAt, claims, recoveries, ' +
  'processing_failures AS processingFailures, max_attempts AS maxAttempts, error';

const ITEM_COLUMNS =
  'fan_out_id AS fanOutId, item_index AS "index", chunk_id AS chunkId, shard, input, status, attempt, failures, ' +
  'attempt_id AS attemptId, worker_id AS workerId, attempt_expires_at AS attemptExpiresAt, retry_at AS retryAt, ' +
  'output, error, finished_at AS finishedAt';

/** Read one fan-out row. */
export function selectFanOut(db: Db): (fanOutId: string) => FanOutRecord | null {
  const statement = db.prepare<[string], FanOutRow>(
    `SELECT ${FAN_OUT_COLUMNS} FROM skein_fan_outs WHERE fan_out_id = ?`,
  );
  return (fanOutId) => {
    const row = statement.get(fanOutId);
    return row === undefined
      ? null
      : { ...row, shards: JSON.parse(row.shards) as string[], required: row.required === 1 };
  };
}

/** Insert a fan-out row, or update every column that changes (a row is written whole). */
export function writeFanOut(db: Db): (row: FanOutRecord, write: 'insert' | 'update') => void {
  const insert = db.prepare(
    'INSERT INTO skein_fan_outs (fan_out_id, execution_id, name, task, task_version, chunk_size, shards, required, ' +
      'max_attempts, status, total, seeded_chunks, seeded_items, creation_token, creation_owner, creation_expires_at, ' +
      'created_at, dispatched_at, settled_at, error, summary) VALUES (@fanOutId, @executionId, @name, @task, ' +
      '@taskVersion, @chunkSize, @shards, @required, @maxAttempts, @status, @total, @seededChunks, @seededItems, ' +
      '@creationToken, @creationOwner, @creationExpiresAt, @createdAt, @dispatchedAt, @settledAt, @error, @summary)',
  );
  const update = db.prepare(
    'UPDATE skein_fan_outs SET status = @status, total = @total, seeded_chunks = @seededChunks, ' +
      'seeded_items = @seededItems, creation_token = @creationToken, creation_owner = @creationOwner, ' +
      'creation_expires_at = @creationExpiresAt, dispatched_at = @dispatchedAt, settled_at = @settledAt, ' +
      'error = @error, summary = @summary WHERE fan_out_id = @fanOutId',
  );
  return (row, write) => {
    const params = { ...row, shards: JSON.stringify(row.shards), required: row.required ? 1 : 0 };
    (write === 'insert' ? insert : update).run(params);
  };
}

/** The placement ledger of a fan-out, in placement order. */
export function selectPlacements(db: Db): Database.Statement<[string], Placement> {
  return db.prepare<[string], Placement>(
    'SELECT fan_out_id AS fanOutId, shard, chunks, write_epoch AS writeEpoch, dispatched ' +
      'FROM skein_fan_out_placements WHERE fan_out_id = ? ORDER BY position',
  );
}

/** Insert one placement at its position. */
export function insertPlacement(db: Db): (placement: Placement, position: number) => void {
  const statement = db.prepare(
    'INSERT INTO skein_fan_out_placements (fan_out_id, position, shard, chunks, write_epoch, dispatched) ' +
      'VALUES (@fanOutId, @position, @shard, @chunks, @writeEpoch, @dispatched)',
  );
  return (placement, position) => statement.run({ ...placement, position });
}

/** Move a placement's dispatch cursor. */
export function updateDispatched(
  db: Db,
): Database.Statement<{ fanOutId: string; shard: string; dispatched: number }> {
  return db.prepare<{ fanOutId: string; shard: string; dispatched: number }>(
    'UPDATE skein_fan_out_placements SET dispatched = @dispatched WHERE fan_out_id = @fanOutId AND shard = @shard',
  );
}

/** Read one chunk row. */
export function selectChunk(db: Db): Database.Statement<[string, string, number], ChunkRecord> {
  return db.prepare<[string, string, number], ChunkRecord>(
    `SELECT ${CHUNK_COLUMNS} FROM skein_fan_out_chunks WHERE fan_out_id = ? AND shard = ? AND chunk_id = ?`,
  );
}

/** Leased chunks whose lease expired by `now`, oldest expiry first. */
export function selectExpired(db: Db): Database.Statement<{ now: number; limit: number }, ChunkRecord> {
  return db.prepare<{ now: number; limit: number }, ChunkRecord>(
    `SELECT ${CHUNK_COLUMNS} FROM skein_fan_out_chunks WHERE status = 'leased' AND lease_expires_at <= @now ` +
      'ORDER BY lease_expires_at LIMIT @limit',
  );
}

/** Insert a chunk row. */
export function insertChunk(db: Db): Database.Statement<ChunkRecord> {
  return db.prepare<ChunkRecord>(
    'INSERT INTO skein_fan_out_chunks (fan_out_id, shard, chunk_id, store_alias, first_index, size, write_epoch, ' +
      'status, available_at, lease_token, worker_id, lease_expires_at, claims, recoveries, processing_failures, ' +
      'max_attempts, error) VALUES (@fanOutId, @shard, @chunkId, @storeAlias, @firstIndex, @size, @writeEpoch, ' +
      '@status, @availableAt, @leaseToken, @workerId, @leaseExpiresAt, @claims, @recoveries, @processingFailures, ' +
      '@maxAttempts, @error)',
  );
}

/** Write every column of a chunk row that changes. */
export function updateChunk(db: Db): Database.Statement<ChunkRecord> {
  return db.prepare<ChunkRecord>(
    'UPDATE skein_fan_out_chunks SET status = @status, available_at = @availableAt, lease_token = @leaseToken, ' +
      'worker_id = @workerId, lease_expires_at = @leaseExpiresAt, claims = @claims, recoveries = @recoveries, ' +
      'processing_failures = @processingFailures, error = @error ' +
      'WHERE fan_out_id = @fanOutId AND shard = @shard AND chunk_id = @chunkId',
  );
}

/** Items of a fan-out with index in `[from, to)`, by index. */
export function selectItemRange(db: Db): Database.Statement<[string, number, number], ItemRecord> {
  return db.prepare<[string, number, number], ItemRecord>(
    `SELECT ${ITEM_COLUMNS} FROM skein_fan_out_items WHERE fan_out_id = ? AND item_index >= ? AND item_index < ? ` +
      'ORDER BY item_index',
  );
}

/** A page of a fan-out's items after an index, by index. */
export function selectItemPage(
  db: Db,
): Database.Statement<{ fanOutId: string; after: number; limit: number }, ItemRecord> {
  return db.prepare<{ fanOutId: string; after: number; limit: number }, ItemRecord>(
    `SELECT ${ITEM_COLUMNS} FROM skein_fan_out_items WHERE fan_out_id = @fanOutId AND item_index > @after ` +
      'ORDER BY item_index LIMIT @limit',
  );
}

/** Insert an item row. */
export function insertItem(db: Db): Database.Statement<ItemRecord> {
  return db.prepare<ItemRecord>(
    'INSERT INTO skein_fan_out_items (fan_out_id, item_index, chunk_id, shard, input, status, attempt, failures, ' +
      'attempt_id, worker_id, attempt_expires_at, retry_at, output, error, finished_at) VALUES (@fanOutId, @index, ' +
      '@chunkId, @shard, @input, @status, @attempt, @failures, @attemptId, @workerId, @attemptExpiresAt, @retryAt, ' +
      '@output, @error, @finishedAt)',
  );
}

/** Write every column of an item row that changes. */
export function updateItem(db: Db): Database.Statement<ItemRecord> {
  return db.prepare<ItemRecord>(
    'UPDATE skein_fan_out_items SET status = @status, attempt = @attempt, failures = @failures, ' +
      'attempt_id = @attemptId, worker_id = @workerId, attempt_expires_at = @attemptExpiresAt, retry_at = @retryAt, ' +
      'output = @output, error = @error, finished_at = @finishedAt WHERE fan_out_id = @fanOutId AND item_index = @index',
  );
}

/** Counts of a fan-out's chunks in this file, by status. */
export function selectChunkCounts(db: Db): (fanOutId: string) => FanOutCounts['chunks'] {
  const chunks = db.prepare<[string], { status: keyof FanOutCounts['chunks']; n: number }>(
    'SELECT status, count(*) AS n FROM skein_fan_out_chunks WHERE fan_out_id = ? GROUP BY status',
  );
  return (fanOutId) => {
    const counts = emptyCounts().chunks;
    for (const row of chunks.all(fanOutId)) counts[row.status] = row.n;
    return counts;
  };
}

/** Counts of a fan-out's chunks and items in this file, by status. */
export function selectCounts(db: Db): (fanOutId: string) => FanOutCounts {
  const chunks = db.prepare<[string], { status: keyof FanOutCounts['chunks']; n: number }>(
    'SELECT status, count(*) AS n FROM skein_fan_out_chunks WHERE fan_out_id = ? GROUP BY status',
  );
  const items = db.prepare<[string], { status: keyof FanOutCounts['items']; n: number }>(
    'SELECT status, count(*) AS n FROM skein_fan_out_items WHERE fan_out_id = ? GROUP BY status',
  );
  return (fanOutId) => {
    const counts = emptyCounts();
    for (const row of chunks.all(fanOutId)) counts.chunks[row.status] = row.n;
    for (const row of items.all(fanOutId)) counts.items[row.status] = row.n;
    return counts;
  };
}
