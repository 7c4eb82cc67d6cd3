-- Headers of outbox messages (adr/0072): the W3C trace context (traceparent, tracestate) and
-- any other string headers that travel with a message to its consumers, written with the
-- ledger row in the same transaction. A JSON object of strings; NULL when the message has none.
ALTER TABLE skein_outbox_events ADD COLUMN headers TEXT;
