-- Queue items and their slots (docs/queues.md). A row in state 'running' holds a slot until
-- expires_at; a lapsed one is claimable again. Time always comes from the caller.
CREATE TABLE skein_queue_items (
  execution_id text COLLATE "C" NOT NULL PRIMARY KEY,
  queue text COLLATE "C" NOT NULL,
  partition_key text COLLATE "C" NOT NULL,
  priority integer NOT NULL,
  workflow text NOT NULL,
  version integer NOT NULL,
  input text NOT NULL,
  enqueued_at bigint NOT NULL,
  available_at bigint NOT NULL,
  deduplication_id text COLLATE "C",
  state text NOT NULL CHECK (state IN ('queued', 'running', 'suspended')),
  owner text,
  expires_at bigint
);

CREATE UNIQUE INDEX skein_queue_items_dedup ON skein_queue_items (queue, deduplication_id)
  WHERE deduplication_id IS NOT NULL;
-- A claim walks the partitions with a queued item, then reads each one's first items in serving
-- order (by priority, or by enqueue time), so its cost follows the partitions, not the backlog.
CREATE INDEX skein_queue_items_by_priority ON skein_queue_items
  (queue, state, partition_key, priority, enqueued_at, execution_id);
CREATE INDEX skein_queue_items_by_time ON skein_queue_items (queue, state, partition_key, enqueued_at, execution_id);

-- When slots were handed out, for rate limits; rows older than the window are pruned by claims.
CREATE TABLE skein_queue_starts (
  queue text COLLATE "C" NOT NULL,
  started_at bigint NOT NULL
);
CREATE INDEX skein_queue_starts_window ON skein_queue_starts (queue, started_at);

-- One row per queue: the partition it served last (the round-robin's place). Claims of a queue
-- lock this row first, so they take turns across every process.
CREATE TABLE skein_queue_cursors (
  queue text COLLATE "C" NOT NULL PRIMARY KEY,
  last_partition text COLLATE "C"
);

-- Schedule state (docs/schedules.md), written compare-and-set on revision.
CREATE TABLE skein_schedules (
  name text COLLATE "C" NOT NULL PRIMARY KEY,
  next_due_at bigint NOT NULL,
  paused boolean NOT NULL,
  revision bigint NOT NULL,
  last_execution_id text,
  buffered_due_at bigint
);
