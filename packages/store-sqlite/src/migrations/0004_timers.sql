-- Durable timers. claimed_until is 0 when never claimed; a claim lapses when now passes it.
CREATE TABLE skein_timers (
  timer_id TEXT NOT NULL PRIMARY KEY,
  execution_id TEXT NOT NULL,
  due_at INTEGER NOT NULL,
  claimed_by TEXT,
  claimed_until INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

-- claimDue walks due timers oldest first.
CREATE INDEX skein_timers_due ON skein_timers (due_at, timer_id);
-- nextDueAt: the earliest moment any timer is due and unclaimed.
CREATE INDEX skein_timers_available ON skein_timers (max(due_at, claimed_until));
CREATE INDEX skein_timers_execution ON skein_timers (execution_id);
