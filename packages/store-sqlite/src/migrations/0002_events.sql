-- The execution index: one row per execution, created by acquireFence (before seq 0 exists,
-- last_seq = -1, workflow and status NULL) or by the first append. Listing skips last_seq < 0.
CREATE TABLE skein_executions (
  execution_id TEXT NOT NULL PRIMARY KEY,
  workflow TEXT,
  status TEXT,
  last_seq INTEGER NOT NULL DEFAULT -1,
  fence INTEGER NOT NULL DEFAULT 0,
  updated_at INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

-- Paging by execution id within one status, one workflow, or both.
CREATE INDEX skein_executions_status ON skein_executions (status, execution_id);
CREATE INDEX skein_executions_workflow ON skein_executions (workflow, execution_id);
CREATE INDEX skein_executions_workflow_status ON skein_executions (workflow, status, execution_id);

-- The log. A rowid table (not WITHOUT ROWID) because payloads may be up to the configured
-- limit (1 MiB by default), far past the row size WITHOUT ROWID tables handle well.
CREATE TABLE skein_events (
  execution_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  envelope_id TEXT NOT NULL UNIQUE,
  type TEXT NOT NULL,
  payload TEXT NOT NULL,
  fence INTEGER NOT NULL,
  recorded_at INTEGER NOT NULL,
  PRIMARY KEY (execution_id, seq)
);
