-- The signal inbox: accepted signals wait here, outside the log, until a run consumes them.
-- position is the send order ("oldest first"); signal_id makes a resend a no-op.
CREATE TABLE skein_signals (
  position INTEGER PRIMARY KEY AUTOINCREMENT,
  signal_id TEXT NOT NULL UNIQUE,
  execution_id TEXT NOT NULL,
  name TEXT NOT NULL,
  payload TEXT NOT NULL,
  sent_at INTEGER NOT NULL
);

-- pending(executionId): one execution's inbox in send order.
CREATE INDEX skein_signals_execution ON skein_signals (execution_id, position);
