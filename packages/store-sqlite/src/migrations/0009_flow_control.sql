-- Queue items and their slots (docs/queues.md). A row in state 'running' holds a slot until
-- expires_at; a lapsed one is claimable again. Time always comes from the caller.
CREATE TABLE skein_queue_items (
  execution_id TEXT NOT NULL PRIMARY KEY,
  queue TEXT NOT NULL,
  partition_key TEXT NOT NULL,
  priority INTEGER NOT NULL,
  workflow TEXT NOT NULL,
  version INTEGER NOT NULL,
  input TEXT NOT NULL,
  enqueued_at INTEGER NOT NULL,
  available_at INTEGER NOT NULL,
  deduplication_id TEXT,
  state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'suspended')),
  owner TEXT,
  expires_at INTEGER
) WITHOUT ROWID;

CREATE UNIQUE INDEX skein_queue_items_dedup ON skein_queue_items (queue, deduplication_id)
  WHERE deduplication_id IS NOT NULL;
-- A claim walks the partitions with a queued item, then reads each one's first items in serving
-- order (by priority, or by enqueue time), so its cost follows the partitions, not the backlog.
CREATE INDEX skein_queue_items_by_priority ON skein_queue_items
  (queue, state, partition_key, priority, enqueued_at, execution_id);
CREATE INDEX skein_queue_items_by_time ON skein_queue_items (queue, state, partition_key, enqueued_at, execution_id);

-- When slots were handed out, for rate limits; rows older than the window are pruned by claims.
CREATE TABLE skein_queue_starts (
  queue TEXT NOT NULL,
  started_at INTEGER NOT NULL
);
CREATE INDEX skein_queue_starts_window ON skein_queue_starts (queue, started_at);

-- The partition each queue served last (the round-robin's place).
CREATE TABLE skein_queue_cursors (
  queue TEXT NOT NULL PRIMARY KEY,
  last_partition TEXT
) WITHOUT ROWID;

-- Schedule state (docs/schedules.md), written compare-and-set on revision.
CREATE TABLE skein_schedules (
  name TEXT NOT NULL PRIMARY KEY,
  next_due_at INTEGER NOT NULL,
  paused INTEGER NOT NULL,
  revision INTEGER NOT NULL,
  last_execution_id TEXT,
  buffered_due_at INTEGER
) WITHOUT ROWID;
