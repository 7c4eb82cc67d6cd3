-- The signal inbox: signals wait here, outside the log, until a run consumes them.
-- position orders them by arrival ("first sent, first consumed"); signal_id makes a resend a no-op.
CREATE TABLE skein_signals (
  signal_id text COLLATE "C" NOT NULL PRIMARY KEY,
  execution_id text COLLATE "C" NOT NULL,
  name text NOT NULL,
  payload text NOT NULL,
  sent_at bigint NOT NULL,
  position bigint GENERATED ALWAYS AS IDENTITY
);

CREATE INDEX skein_signals_execution ON skein_signals (execution_id, position);
