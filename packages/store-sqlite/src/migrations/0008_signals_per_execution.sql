-- Signal ids are scoped to their execution: the unique key becomes (execution_id, signal_id),
-- so a signal to one execution is never dropped because another execution holds its id.
-- A consumed signal is kept as a row with consumed = 1 and no payload until the execution
-- ends, so a resend of its id is a duplicate however late it comes. Existing rows keep their
-- position (send order) and stay waiting.
CREATE TABLE skein_signals_scoped (
  position INTEGER PRIMARY KEY AUTOINCREMENT,
  execution_id TEXT NOT NULL,
  signal_id TEXT NOT NULL,
  name TEXT NOT NULL,
  payload TEXT NOT NULL,
  sent_at INTEGER NOT NULL,
  consumed INTEGER NOT NULL DEFAULT 0,
  UNIQUE (execution_id, signal_id)
);

INSERT INTO skein_signals_scoped (position, execution_id, signal_id, name, payload, sent_at)
  SELECT position, execution_id, signal_id, name, payload, sent_at FROM skein_signals ORDER BY position;

DROP TABLE skein_signals;
ALTER TABLE skein_signals_scoped RENAME TO skein_signals;

-- A wait: the oldest waiting signals of given names. Also counts the waiting (the bound).
CREATE INDEX skein_signals_waiting ON skein_signals (execution_id, name, position) WHERE consumed = 0;
-- pending in send order, with no name filter or with many names: the names are matched on
-- the index, so a row (and its payload) is read only when it is returned.
CREATE INDEX skein_signals_inbox ON skein_signals (execution_id, position, name) WHERE consumed = 0;
