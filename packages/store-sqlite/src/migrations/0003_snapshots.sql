-- The newest snapshot of each execution (L5: a cache, never the truth).
CREATE TABLE skein_snapshots (
  execution_id TEXT NOT NULL PRIMARY KEY,
  seq INTEGER NOT NULL,
  state TEXT NOT NULL
);
