-- Which numbered migrations this schema has applied. The runner reads it inside the same
-- transaction that applies the missing ones, under pg_advisory_xact_lock, so processes
-- opening one database at once apply each migration exactly once.
CREATE TABLE skein_migrations (
  id integer PRIMARY KEY,
  name text NOT NULL,
  applied_at bigint NOT NULL
);
