-- The head row no longer repeats what the log holds: the last seq and the time of the newest
-- event are read from skein_events (its primary key (execution_id, seq) finds both with one
-- backward seek). A step's append then inserts its events under a share lock on the head and
-- leaves the row alone; the head changes only with the status (seq 0, suspension, resumption,
-- the end). Seq 0 exists exactly when status IS NOT NULL. See adr/0018.
ALTER TABLE skein_executions DROP COLUMN last_seq;
ALTER TABLE skein_executions DROP COLUMN updated_at;
