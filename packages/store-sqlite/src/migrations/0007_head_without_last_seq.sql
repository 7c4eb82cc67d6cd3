-- The head row no longer repeats what the log holds: the last seq and the time of the newest
-- event are read from skein_events (its primary key (execution_id, seq) finds both with one
-- seek). A step's append then writes only its events; the head row changes only with the
-- status (seq 0, suspension, resumption, the end). Existence of seq 0 is `status IS NOT NULL`.
ALTER TABLE skein_executions DROP COLUMN last_seq;
ALTER TABLE skein_executions DROP COLUMN updated_at;
