-- The newest snapshot of each execution (L5: a cache, never the truth).
CREATE TABLE skein_snapshots (
  execution_id text COLLATE "C" NOT NULL PRIMARY KEY,
  seq bigint NOT NULL,
  state text NOT NULL
);
