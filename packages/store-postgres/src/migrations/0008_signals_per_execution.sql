-- Signal ids are scoped to their execution: the primary key becomes (execution_id, signal_id),
-- so a signal to one execution is never dropped because another execution holds its id.
-- A consumed signal is kept as a row with consumed = true and no payload until the execution
-- ends, so a resend of its id is a duplicate however late it comes. Existing rows keep their
-- position (send order) and stay waiting.
ALTER TABLE skein_signals DROP CONSTRAINT skein_signals_pkey;
ALTER TABLE skein_signals ADD COLUMN consumed boolean NOT NULL DEFAULT false;
ALTER TABLE skein_signals ADD CONSTRAINT skein_signals_pkey PRIMARY KEY (execution_id, signal_id);

DROP INDEX skein_signals_execution;
-- A wait: the oldest waiting signals of given names. Also counts the waiting (the bound).
CREATE INDEX skein_signals_waiting ON skein_signals (execution_id, name, position) WHERE NOT consumed;
-- pending with no name filter: the waiting signals in send order.
CREATE INDEX skein_signals_inbox ON skein_signals (execution_id, position) WHERE NOT consumed;

-- Keep a signal unless its execution already has its id ('duplicate') or p_max_pending signals
-- waiting ('inbox-full'); a new one ('sent') notifies p_channel with its execution id at commit.
-- Senders to one execution take turns on a transaction-scoped advisory lock (class 1397441870,
-- "SKEN", keyed by the execution id's hash), so the count and the insert are one step, no
-- concurrent sender passes the bound, and positions of one execution follow the order in
-- which its sends took effect. Each statement of a plpgsql function sees what committed
-- before it started, so the count includes every send that held the lock before.
CREATE FUNCTION skein_send_signal(
  p_signal_id text,
  p_execution_id text,
  p_name text,
  p_payload text,
  p_sent_at bigint,
  p_max_pending integer,
  p_channel text
) RETURNS text
LANGUAGE plpgsql
AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(1397441870, hashtext(p_execution_id));
  PERFORM 1 FROM skein_signals WHERE execution_id = p_execution_id AND signal_id = p_signal_id;
  IF FOUND THEN
    RETURN 'duplicate';
  END IF;
  IF (SELECT count(*) FROM skein_signals WHERE execution_id = p_execution_id AND NOT consumed) >= p_max_pending THEN
    RETURN 'inbox-full';
  END IF;
  INSERT INTO skein_signals (signal_id, execution_id, name, payload, sent_at)
    VALUES (p_signal_id, p_execution_id, p_name, p_payload, p_sent_at);
  PERFORM pg_notify(p_channel, p_execution_id);
  RETURN 'sent';
END
$$;
