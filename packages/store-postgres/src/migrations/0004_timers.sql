-- Durable timers. claimed_until is 0 when never claimed; a claim lapses when now passes it.
CREATE TABLE skein_timers (
  timer_id text COLLATE "C" NOT NULL PRIMARY KEY,
  execution_id text COLLATE "C" NOT NULL,
  due_at bigint NOT NULL,
  claimed_by text,
  claimed_until bigint NOT NULL DEFAULT 0
);

-- claimDue walks due timers oldest first.
CREATE INDEX skein_timers_due ON skein_timers (due_at, timer_id);
-- nextDueAt: the earliest moment any timer is due and unclaimed.
CREATE INDEX skein_timers_available ON skein_timers ((greatest(due_at, claimed_until)));
CREATE INDEX skein_timers_execution ON skein_timers (execution_id);
