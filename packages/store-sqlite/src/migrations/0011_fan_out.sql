-- Fan-out runs (docs/fan-out.md). The home rows: one per fan-out, with its plan, creation
-- lease and creation cursor (seeded_chunks, seeded_items), and its settlement.
CREATE TABLE skein_fan_outs (
  fan_out_id TEXT NOT NULL PRIMARY KEY,
  execution_id TEXT NOT NULL,
  name TEXT NOT NULL,
  task TEXT NOT NULL,
  task_version INTEGER NOT NULL,
  chunk_size INTEGER NOT NULL,
  shards TEXT NOT NULL, -- a JSON array of shard names, in placement order
  required INTEGER NOT NULL,
  max_attempts INTEGER NOT NULL,
  status TEXT NOT NULL,
  total INTEGER,
  seeded_chunks INTEGER NOT NULL,
  seeded_items INTEGER NOT NULL,
  creation_token TEXT,
  creation_owner TEXT,
  creation_expires_at INTEGER,
  created_at INTEGER NOT NULL,
  dispatched_at INTEGER,
  settled_at INTEGER,
  error TEXT,
  summary TEXT
) WITHOUT ROWID;

-- The placement ledger: one row per shard of a fan-out, written at dispatch, with its chunk
-- count, write epoch and dispatch cursor.
CREATE TABLE skein_fan_out_placements (
  fan_out_id TEXT NOT NULL,
  position INTEGER NOT NULL,
  shard TEXT NOT NULL,
  chunks INTEGER NOT NULL,
  write_epoch INTEGER NOT NULL,
  dispatched INTEGER NOT NULL,
  PRIMARY KEY (fan_out_id, position)
) WITHOUT ROWID;

-- The chunks of the shards this store holds, with their chunk lease and budgets.
CREATE TABLE skein_fan_out_chunks (
  fan_out_id TEXT NOT NULL,
  shard TEXT NOT NULL,
  chunk_id INTEGER NOT NULL,
  store_alias TEXT NOT NULL,
  first_index INTEGER NOT NULL,
  size INTEGER NOT NULL,
  write_epoch INTEGER NOT NULL,
  status TEXT NOT NULL,
  available_at INTEGER NOT NULL,
  lease_token TEXT,
  worker_id TEXT,
  lease_expires_at INTEGER,
  claims INTEGER NOT NULL,
  recoveries INTEGER NOT NULL,
  processing_failures INTEGER NOT NULL,
  max_attempts INTEGER NOT NULL,
  error TEXT,
  PRIMARY KEY (fan_out_id, shard, chunk_id)
) WITHOUT ROWID;

-- recoverExpired walks leased chunks by lease expiry.
CREATE INDEX skein_fan_out_chunks_leased
  ON skein_fan_out_chunks (lease_expires_at) WHERE status = 'leased';

-- The items of those chunks, with the current attempt (id, worker, lease) and the result.
CREATE TABLE skein_fan_out_items (
  fan_out_id TEXT NOT NULL,
  item_index INTEGER NOT NULL,
  chunk_id INTEGER NOT NULL,
  shard TEXT NOT NULL,
  input TEXT NOT NULL,
  status TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  failures INTEGER NOT NULL,
  attempt_id TEXT,
  worker_id TEXT,
  attempt_expires_at INTEGER,
  retry_at INTEGER,
  output TEXT,
  error TEXT,
  finished_at INTEGER,
  PRIMARY KEY (fan_out_id, item_index)
) WITHOUT ROWID;
