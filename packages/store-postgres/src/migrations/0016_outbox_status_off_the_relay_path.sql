-- A delivery's status leaves the relay's path (adr/0101). The index on (status, message_id) took
-- an entry from every claim, since a claim writes a new row version that is still pending, and
-- from every publish settlement: per relayed message one insert into the middle of an index
-- whose pending range fills with the dead entries of claimed and published rows. Settled
-- deliveries are listed and pruned through indexes of their own status, which a claim never
-- writes to (a claimed row is pending) and a settlement writes once; pending deliveries are
-- listed through the pending index the claim already keeps.

-- A claim token is held only by a pending delivery: every settlement, retirement and
-- reschedule clears it. The settlement then finds its rows by id and token alone (below).
UPDATE skein_outbox_deliveries SET claim_token = NULL WHERE status <> 'pending' AND claim_token IS NOT NULL;
ALTER TABLE skein_outbox_deliveries
  ADD CONSTRAINT skein_outbox_deliveries_token_pending CHECK (claim_token IS NULL OR status = 'pending');

DROP INDEX skein_outbox_deliveries_status;
CREATE INDEX skein_outbox_deliveries_published ON skein_outbox_deliveries (message_id) WHERE status = 'published';
CREATE INDEX skein_outbox_deliveries_retired ON skein_outbox_deliveries (message_id) WHERE status = 'retired';

-- Mark the claims (p_ids[i] held by p_tokens[i]) published at p_now; returns the ids marked. A
-- row holding the token is pending (the constraint above). Without a status condition the
-- pending index does not qualify for the update's scan, which leaves the primary key: with one,
-- a plan made while the table was small could read every pending row once per batch.
CREATE OR REPLACE FUNCTION skein_outbox_publish_all(p_ids text[], p_tokens text[], p_now bigint)
RETURNS SETOF text
LANGUAGE plpgsql VOLATILE ROWS 100
SET search_path FROM CURRENT
SET enable_seqscan = off SET enable_bitmapscan = off SET enable_sort = off
SET enable_hashjoin = off SET enable_mergejoin = off SET jit = off SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
  RETURN QUERY
  UPDATE skein_outbox_deliveries d SET status = 'published', claim_token = NULL, settled_at = p_now
  FROM unnest(p_ids, p_tokens) AS c (i, t)
  WHERE d.message_id = c.i AND d.claim_token = c.t
  RETURNING d.message_id;
END
$$;

-- The settings every function below plans under (as migration 0015's): no sequential or bitmap
-- scans, sorts, hash or merge joins, so each statement has the one plan its index gives, made
-- once per session as a generic plan, whatever the table's statistics say. Planned from
-- statistics, a page of published deliveries bitmap-scanned every published row after the
-- cursor and sorted them (never analysed), and a prune the same.

-- Deliveries after p_after by message id, at most p_limit: of one status, or of any when p_status
-- is null. Each branch finds the page's ids in the index that holds just those rows: any status,
-- the primary key; published and retired, the partial index of the status; pending, the pending
-- index (available_at, message_id), the only order it gives asked of the inner read so that it
-- is the one plan: a page reads every pending delivery after the cursor (a relay keeps few) and
-- sorts them by id; read by the primary key it would walk the settled ones too. The page's rows
-- are then looked up by id.
CREATE FUNCTION skein_outbox_list(p_status text, p_after text, p_limit integer)
RETURNS TABLE (
  id text, topic text, key text, payload text, created_at bigint, status text, available_at bigint,
  attempts integer, claim_token text, last_error text, settled_at bigint, headers text
)
LANGUAGE plpgsql STABLE ROWS 100
SET search_path FROM CURRENT
SET enable_seqscan = off SET enable_bitmapscan = off SET enable_sort = off
SET enable_hashjoin = off SET enable_mergejoin = off SET jit = off SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  page text[];
BEGIN
  IF p_status IS NULL THEN
    SELECT array_agg(a.message_id ORDER BY a.message_id) INTO page FROM (
      SELECT x.message_id FROM skein_outbox_deliveries x
      WHERE x.message_id > p_after ORDER BY x.message_id LIMIT p_limit
    ) a;
  ELSIF p_status = 'pending' THEN
    SELECT array_agg(a.message_id ORDER BY a.message_id) INTO page FROM (
      SELECT q.message_id FROM (
        SELECT x.message_id FROM skein_outbox_deliveries x
        WHERE x.status = 'pending' AND x.message_id > p_after
        ORDER BY x.available_at, x.message_id
        OFFSET 0
      ) q ORDER BY q.message_id LIMIT p_limit
    ) a;
  ELSIF p_status = 'published' THEN
    SELECT array_agg(a.message_id ORDER BY a.message_id) INTO page FROM (
      SELECT x.message_id FROM skein_outbox_deliveries x
      WHERE x.status = 'published' AND x.message_id > p_after ORDER BY x.message_id LIMIT p_limit
    ) a;
  ELSIF p_status = 'retired' THEN
    SELECT array_agg(a.message_id ORDER BY a.message_id) INTO page FROM (
      SELECT x.message_id FROM skein_outbox_deliveries x
      WHERE x.status = 'retired' AND x.message_id > p_after ORDER BY x.message_id LIMIT p_limit
    ) a;
  ELSE
    RAISE EXCEPTION 'no delivery status %', p_status;
  END IF;
  RETURN QUERY
  SELECT d.message_id, e.topic, e.key, e.payload, e.created_at, d.status, d.available_at, d.attempts,
    d.claim_token, d.last_error, d.settled_at, e.headers
  FROM unnest(page) WITH ORDINALITY AS g (message_id, n)
  JOIN skein_outbox_deliveries d ON d.message_id = g.message_id
  JOIN skein_outbox_events e ON e.message_id = g.message_id
  ORDER BY g.n;
END
$$;

-- Delete up to p_limit published deliveries settled before p_before, oldest message first
-- (skipping rows another pruner holds), and their ledger rows; returns how many. The published
-- index is walked from its first entry: the oldest published deliveries are the first pruned.
CREATE FUNCTION skein_outbox_prune(p_before bigint, p_limit integer)
RETURNS integer
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT
SET enable_seqscan = off SET enable_bitmapscan = off SET enable_sort = off
SET enable_hashjoin = off SET enable_mergejoin = off SET jit = off SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  pruned integer;
BEGIN
  WITH old AS (
    SELECT o.message_id FROM skein_outbox_deliveries o
    WHERE o.status = 'published' AND o.settled_at < p_before
    ORDER BY o.message_id LIMIT p_limit FOR UPDATE SKIP LOCKED
  ),
  gone AS (
    DELETE FROM skein_outbox_deliveries d USING old WHERE d.message_id = old.message_id
    RETURNING d.message_id
  )
  DELETE FROM skein_outbox_events e USING gone WHERE e.message_id = gone.message_id;
  GET DIAGNOSTICS pruned = ROW_COUNT;
  RETURN pruned;
END
$$;
