-- The relay's claim and its publish settlement as functions whose plans do not depend on the
-- table's statistics (adr/0099). Planned from statistics, both statements read every pending
-- delivery per batch: on a table filled since its last ANALYZE the planner guesses a handful
-- of pending rows, so the claim's pick sorts all of them instead of walking the pending index
-- in order, and the settlement (like the claim's update) joins its batch against a scan of the
-- whole table, which the default random_page_cost prices below two hundred primary-key lookups.
-- A batch then costs time in the size of the backlog, and draining a backlog costs its square.
-- The settings below leave one kind of plan: the pending index walked in order, and the
-- primary keys looked up row by row. A sort is left only for the claimed batch's own order.
-- The plans' costs then include the planner's penalty for what is switched off, which would
-- pass the JIT thresholds: JIT is off in both (it took ~380 ms to compile a claim). PL/pgSQL
-- keeps each statement's plan for the session, made once as a generic plan (with only index
-- paths left there is no better plan for particular values to find): a SQL function would
-- plan its body again on every call, ~0.25 ms of server CPU, which an idle relay polling
-- every few milliseconds pays each time. search_path is the schema the function was created
-- in, whoever calls it.

CREATE FUNCTION skein_outbox_claim(
  p_now bigint, p_limit integer, p_token text, p_until bigint, p_max integer, p_topics text[]
) RETURNS TABLE (
  id text, topic text, key text, payload text, created_at bigint, attempts integer,
  last_error text, headers text
)
LANGUAGE plpgsql VOLATILE ROWS 100
SET search_path FROM CURRENT
SET enable_seqscan = off SET enable_bitmapscan = off SET enable_sort = off
SET enable_hashjoin = off SET enable_mergejoin = off SET jit = off SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
  RETURN QUERY
  WITH picked AS (
    SELECT d.message_id, d.attempts, d.last_error, d.available_at FROM skein_outbox_deliveries d
    WHERE d.status = 'pending' AND d.available_at <= p_now
      AND (p_topics IS NULL OR d.topic = ANY (p_topics))
    ORDER BY d.available_at, d.message_id
    LIMIT p_limit
    FOR UPDATE SKIP LOCKED
  ),
  retired AS (
    UPDATE skein_outbox_deliveries d SET status = 'retired', claim_token = NULL, settled_at = p_now,
      last_error = 'retired after ' || p.attempts || ' claims that never settled (maxDeliveryAttempts ' ||
        p.attempts || ')' || coalesce('; last error: ' || p.last_error, '')
    FROM picked p WHERE d.message_id = p.message_id AND p.attempts >= p_max
    RETURNING d.message_id
  ),
  claimed AS (
    UPDATE skein_outbox_deliveries d SET attempts = d.attempts + 1, claim_token = p_token,
      available_at = p_until
    FROM picked p WHERE d.message_id = p.message_id AND p.attempts < p_max
    RETURNING d.message_id, d.attempts, d.last_error, p.available_at AS was_available_at
  )
  SELECT c.message_id, e.topic, e.key, e.payload, e.created_at, c.attempts, c.last_error, e.headers
  FROM claimed c JOIN skein_outbox_events e ON e.message_id = c.message_id
  ORDER BY c.was_available_at, c.message_id;
END
$$;

-- Mark the claims (p_ids[i] held by p_tokens[i]) published at p_now; returns the ids marked.
CREATE FUNCTION skein_outbox_publish_all(p_ids text[], p_tokens text[], p_now bigint)
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
  WHERE d.message_id = c.i AND d.status = 'pending' AND d.claim_token = c.t
  RETURNING d.message_id;
END
$$;
