-- The outbox (docs/outbox.md). The ledger: one row per message, written in the transaction of
-- the append that causes it and never changed.
CREATE TABLE skein_outbox_events (
  message_id TEXT NOT NULL PRIMARY KEY,
  topic TEXT NOT NULL,
  key TEXT NOT NULL,
  payload TEXT NOT NULL,
  created_at INTEGER NOT NULL
) WITHOUT ROWID;

-- The delivery queue: one delivery per message. status is pending, published or retired; a
-- claim sets claim_token and moves available_at to the end of its window, so a claimer that
-- dies leaves the delivery to be claimed again when the window passes.
CREATE TABLE skein_outbox_deliveries (
  message_id TEXT NOT NULL PRIMARY KEY REFERENCES skein_outbox_events (message_id),
  topic TEXT NOT NULL,
  status TEXT NOT NULL,
  available_at INTEGER NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  claim_token TEXT,
  last_error TEXT,
  settled_at INTEGER
) WITHOUT ROWID;

-- claim walks pending deliveries oldest available first.
CREATE INDEX skein_outbox_deliveries_available
  ON skein_outbox_deliveries (available_at, message_id) WHERE status = 'pending';
CREATE INDEX skein_outbox_deliveries_status ON skein_outbox_deliveries (status, message_id);
