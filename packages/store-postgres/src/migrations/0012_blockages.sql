-- Why an execution's log could not be continued (adr/0058): one row per execution, written by
-- the runtime whose run failed. A row stands only while the log still ends at its seq.
CREATE TABLE skein_blockages (
  execution_id text COLLATE "C" NOT NULL PRIMARY KEY,
  seq bigint NOT NULL,
  code text NOT NULL,
  message text NOT NULL,
  since bigint NOT NULL,
  attempts integer NOT NULL,
  last_at bigint NOT NULL
);
