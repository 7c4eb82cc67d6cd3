-- Fan-out runs (docs/fan-out.md). The home rows: one per fan-out, with its plan, creation
-- lease and creation cursor (seeded_chunks, seeded_items), and its settlement.
CREATE TABLE skein_fan_outs (
  fan_out_id text COLLATE "C" NOT NULL PRIMARY KEY,
  execution_id text COLLATE "C" NOT NULL,
  name text NOT NULL,
  task text NOT NULL,
  task_version integer NOT NULL,
  chunk_size integer NOT NULL,
  shards text[] NOT NULL, -- in placement order
  required boolean NOT NULL,
  max_attempts integer NOT NULL,
  status text NOT NULL,
  total bigint,
  seeded_chunks bigint NOT NULL,
  seeded_items bigint NOT NULL,
  creation_token text,
  creation_owner text,
  creation_expires_at bigint,
  created_at bigint NOT NULL,
  dispatched_at bigint,
  settled_at bigint,
  error text,
  summary text
);

-- The placement ledger: one row per shard of a fan-out, written at dispatch, with its chunk
-- count, write epoch and dispatch cursor.
CREATE TABLE skein_fan_out_placements (
  fan_out_id text COLLATE "C" NOT NULL,
  position integer NOT NULL,
  shard text COLLATE "C" NOT NULL,
  chunks bigint NOT NULL,
  write_epoch bigint NOT NULL,
  dispatched bigint NOT NULL,
  PRIMARY KEY (fan_out_id, position)
);

-- The chunks of the shards this schema holds, with their chunk lease and budgets.
CREATE TABLE skein_fan_out_chunks (
  fan_out_id text COLLATE "C" NOT NULL,
  shard text COLLATE "C" NOT NULL,
  chunk_id bigint NOT NULL,
  store_alias text NOT NULL,
  first_index bigint NOT NULL,
  size integer NOT NULL,
  write_epoch bigint NOT NULL,
  status text NOT NULL,
  available_at bigint NOT NULL,
  lease_token text,
  worker_id text,
  lease_expires_at bigint,
  claims integer NOT NULL,
  recoveries integer NOT NULL,
  processing_failures integer NOT NULL,
  max_attempts integer NOT NULL,
  error text,
  PRIMARY KEY (fan_out_id, shard, chunk_id)
);

-- recoverExpired walks leased chunks by lease expiry.
CREATE INDEX skein_fan_out_chunks_leased
  ON skein_fan_out_chunks (lease_expires_at) WHERE status = 'leased';

-- The items of those chunks, with the current attempt (id, worker, lease) and the result.
CREATE TABLE skein_fan_out_items (
  fan_out_id text COLLATE "C" NOT NULL,
  item_index bigint NOT NULL,
  chunk_id bigint NOT NULL,
  shard text COLLATE "C" NOT NULL,
  input text NOT NULL,
  status text NOT NULL,
  attempt integer NOT NULL,
  failures integer NOT NULL,
  attempt_id text,
  worker_id text,
  attempt_expires_at bigint,
  retry_at bigint,
  output text,
  error text,
  finished_at bigint,
  PRIMARY KEY (fan_out_id, item_index)
);
