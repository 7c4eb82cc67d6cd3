-- Which numbered migrations this database has applied. The runner reads it inside the same
-- BEGIN IMMEDIATE transaction that applies the missing ones, so two processes opening one
-- file at once apply each migration exactly once.
CREATE TABLE skein_migrations (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  applied_at INTEGER NOT NULL
);
