-- What an executor keeps in its own file (docs/executors.md): who it is, and every run it
-- accepted, under the binding that accepted it, with the result it chose once.
CREATE TABLE executor_meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;

CREATE TABLE executor_runs (
  execution_id TEXT NOT NULL,
  -- the central fence of the attempt the hub handed out: with the execution id, the run's identity
  fence INTEGER NOT NULL,
  workflow TEXT NOT NULL,
  version INTEGER,
  -- codec JSON of the input: the program's arguments, never shown by inspection
  input TEXT,
  -- the binding (hub incarnation, session id); NULL in both for a row with no binding
  hub_incarnation TEXT,
  session_id TEXT,
  transaction_id TEXT NOT NULL,
  accepted_at INTEGER NOT NULL,
  due_at INTEGER NOT NULL,
  -- the start marker: when this executor began running the run
  started_at INTEGER,
  -- the result, chosen once: 'completed' or 'failed', its codec JSON, exit code and message
  outcome TEXT,
  result TEXT,
  exit_code INTEGER,
  exit_message TEXT,
  chosen_at INTEGER,
  attempts INTEGER NOT NULL DEFAULT 0,
  -- the hub's cause when a refusal ended delivery; the row then leaves the delivery set
  refused TEXT,
  last_diagnostic TEXT,
  PRIMARY KEY (execution_id, fence)
) STRICT;

CREATE INDEX executor_runs_deliverable ON executor_runs (chosen_at)
  WHERE outcome IS NOT NULL AND refused IS NULL;

CREATE TABLE executor_migrations (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  applied_at INTEGER NOT NULL
) STRICT;
