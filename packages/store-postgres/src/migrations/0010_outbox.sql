-- The outbox (docs/outbox.md). The ledger: one row per message, written in the statement of
-- the append that causes it and never changed. The constraint name is part of the contract:
-- the append maps a unique violation on skein_outbox_events_pkey to a reused message id.
CREATE TABLE skein_outbox_events (
  message_id text COLLATE "C" NOT NULL,
  topic text COLLATE "C" NOT NULL,
  key text NOT NULL,
  payload text NOT NULL,
  created_at bigint NOT NULL,
  CONSTRAINT skein_outbox_events_pkey PRIMARY KEY (message_id)
);

-- The delivery queue: one delivery per message. status is pending, published or retired; a
-- claim sets claim_token and moves available_at to the end of its window, so a claimer that
-- dies leaves the delivery to be claimed again when the window passes.
CREATE TABLE skein_outbox_deliveries (
  message_id text COLLATE "C" NOT NULL PRIMARY KEY,
  topic text COLLATE "C" NOT NULL,
  status text NOT NULL,
  available_at bigint NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  claim_token text,
  last_error text,
  settled_at bigint
);

-- claim walks pending deliveries oldest available first (FOR UPDATE SKIP LOCKED).
CREATE INDEX skein_outbox_deliveries_available
  ON skein_outbox_deliveries (available_at, message_id) WHERE status = 'pending';
CREATE INDEX skein_outbox_deliveries_status ON skein_outbox_deliveries (status, message_id);
