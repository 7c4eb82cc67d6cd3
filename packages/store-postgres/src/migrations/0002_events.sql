-- The execution index: one row per execution, created by acquireFence (before seq 0 exists,
-- last_seq = -1, workflow and status NULL) or by the first append. Listing skips last_seq < 0.
-- Ids use the "C" collation: pages are ordered by code point, as in the SQLite store.
CREATE TABLE skein_executions (
  execution_id text COLLATE "C" NOT NULL PRIMARY KEY,
  workflow text COLLATE "C",
  status text,
  last_seq bigint NOT NULL DEFAULT -1,
  fence bigint NOT NULL DEFAULT 0,
  updated_at bigint NOT NULL DEFAULT 0
);

-- Paging by execution id within one status, one workflow, or both.
CREATE INDEX skein_executions_status ON skein_executions (status, execution_id);
CREATE INDEX skein_executions_workflow ON skein_executions (workflow, execution_id);
CREATE INDEX skein_executions_workflow_status ON skein_executions (workflow, status, execution_id);

-- The log. The constraint names are part of the contract: the append maps a unique violation
-- on skein_events_pkey to a taken seq and on skein_events_envelope_id_key to a reused id.
CREATE TABLE skein_events (
  execution_id text COLLATE "C" NOT NULL,
  seq bigint NOT NULL,
  envelope_id text NOT NULL,
  type text NOT NULL,
  payload text NOT NULL,
  fence bigint NOT NULL,
  recorded_at bigint NOT NULL,
  CONSTRAINT skein_events_pkey PRIMARY KEY (execution_id, seq),
  CONSTRAINT skein_events_envelope_id_key UNIQUE (envelope_id)
);
