-- Why an execution's log could not be continued (adr/0058): one row per execution, written by
-- the runtime whose run failed. A row stands only while the log still ends at its seq.
CREATE TABLE skein_blockages (
  execution_id TEXT NOT NULL PRIMARY KEY,
  seq INTEGER NOT NULL,
  code TEXT NOT NULL,
  message TEXT NOT NULL,
  since INTEGER NOT NULL,
  attempts INTEGER NOT NULL,
  last_at INTEGER NOT NULL
) WITHOUT ROWID;
