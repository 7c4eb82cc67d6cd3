/** The outbox's statements (migrations 0010, 0013, 0015 and 0016), one query per function. */
import type { AppendRequest, OutboxDelivery, OutboxMessage } from '@skein/workflow-runtime/spi';
import type { Query } from './database.js';

const DELIVERY_COLUMNS =
  'd.message_id AS id, e.topic, e.key, e.payload, e.created_at AS "createdAt", d.status, ' +
  'd.available_at AS "availableAt", d.attempts, d.claim_token AS "claimToken", d.last_error AS "lastError", ' +
  'd.settled_at AS "settledAt", e.headers';
const JOINED = 'skein_outbox_deliveries d JOIN skein_outbox_events e ON e.message_id = d.message_id';

/**
 * A subquery that makes its statement commit without waiting for the WAL flush (ADR 0095): the
 * relay's claims and settlements. A server crash may forget the last few of them, which only
 * makes deliveries claimable again and published twice (at least once, O3); nothing is marked
 * published without a confirm (O2), and the messages themselves still commit synchronously
 * with their append (O1). A statement reads it as `WHERE (…) IS NOT NULL`: a one-time filter,
 * evaluated once, before the statement's first row.
 */
const ASYNC_COMMIT = "SELECT set_config('synchronous_commit', 'off', true)";

/** The message columns of `messages` as arrays, from parameter `$first` on (seven of them). */
export function messageArrays(messages: readonly OutboxMessage[]): unknown[] {
  return [
    messages.map((m) => m.id),
    messages.map((m) => m.topic),
    messages.map((m) => m.key),
    messages.map((m) => m.payload),
    messages.map((m) => m.createdAt),
    messages.map((m) => m.availableAt ?? m.createdAt),
    messages.map((m) => headersText(m.headers)),
  ];
}

/** The headers column of a message: JSON, or NULL when it has none. */
function headersText(headers: Readonly<Record<string, string>> | undefined): string | null {
  return headers === undefined || Object.keys(headers).length === 0 ? null : JSON.stringify(headers);
}

/** A delivery as its statements read it: the headers as their JSON text. */
export type DeliveryRow<D extends OutboxDelivery = OutboxDelivery> = Omit<D, 'headers'> & {
  headers: string | null;
};

/** The delivery of a row read with the headers column. */
export function deliveryOf<D extends OutboxDelivery>(row: DeliveryRow<D>): D {
  const { headers, ...rest } = row;
  return (headers === null ? rest : { ...rest, headers: JSON.parse(headers) }) as unknown as D;
}

/**
 * The CTEs that write an append's messages, for the full append statement (see
 * sql/full-append.ts): the ledger rows and their deliveries, only when the events were written
 * (`verdict` passed and `written` wrote), so they commit with the events or not at all (O1);
 * and a notification on the outbox wake-up channel, delivered at commit. The notification is
 * part of the deliveries' INSERT, which PostgreSQL always runs: a SELECT CTE of its own was
 * dropped with the unused join that referenced it, and an enqueue woke no publisher.
 */
export function outboxCtes(first: number): string {
  const [i, t, k, p, c, a, h, ch] = [0, 1, 2, 3, 4, 5, 6, 7].map((n) => `$${first + n}`);
  return `
outboxed AS (
  INSERT INTO skein_outbox_events (message_id, topic, key, payload, created_at, headers)
  SELECT m.i, m.t, m.k, m.p, m.c, m.h
  FROM verdict v CROSS JOIN (SELECT count(*) AS n FROM written) w
  CROSS JOIN unnest(${i}::text[], ${t}::text[], ${k}::text[], ${p}::text[], ${c}::bigint[], ${h}::text[])
    AS m (i, t, k, p, c, h)
  WHERE v.refusal IS NULL AND w.n > 0
  RETURNING message_id, topic
),
queued AS (
  INSERT INTO skein_outbox_deliveries (message_id, topic, status, available_at)
  SELECT o.message_id, o.topic, 'pending', q.a
  FROM outboxed o JOIN unnest(${i}::text[], ${a}::bigint[]) AS q (i, a) ON q.i = o.message_id
  CROSS JOIN LATERAL (SELECT pg_notify(${ch}, '')) AS n
),
outbox_notified AS (
  SELECT 1 FROM verdict v WHERE v.refusal IS NULL
),`;
}

/** Write messages and their deliveries in one statement, and notify the outbox channel. */
export function writeMessagesQuery(messages: readonly OutboxMessage[], channel: string): Query {
  return {
    name: 'skein_outbox_write',
    text: `
WITH outboxed AS (
  INSERT INTO skein_outbox_events (message_id, topic, key, payload, created_at, headers)
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $7::text[])
  RETURNING message_id, topic
),
notified AS (SELECT pg_notify($8, ''))
INSERT INTO skein_outbox_deliveries (message_id, topic, status, available_at)
SELECT o.message_id, o.topic, 'pending', q.a
FROM outboxed o JOIN unnest($1::text[], $6::bigint[]) AS q (i, a) ON q.i = o.message_id
CROSS JOIN (SELECT count(*) FROM notified) z`,
    values: [...messageArrays(messages), channel],
  };
}

/** A claimed row as the claim reads it: the message columns, which the claim cannot know without reading. */
export interface ClaimedRow {
  id: string;
  topic: string;
  key: string;
  payload: string;
  createdAt: number;
  attempts: number;
  lastError: string | null;
  headers: string | null;
}

/**
 * Retire, then claim, through `skein_outbox_claim` (migration 0015, whose plan does not
 * depend on statistics): the pending deliveries available at `$1` (of the topics `$6`, or all
 * when null), oldest available first, locked with SKIP LOCKED so concurrent claimers take
 * disjoint rows. Those claimed `$5` times already are retired with their diagnostic; the
 * others get token `$3` and `available_at = $4`. Only the message columns come back, ordered
 * as the claim took them: status, token, availability and settlement are the claim's own.
 * The relaxed commit is set before the function runs (a one-time filter).
 */
export function claimQuery(
  now: number,
  limit: number,
  token: string,
  until: number,
  max: number,
  topics: readonly string[] | null,
): Query {
  return {
    name: 'skein_outbox_claim',
    text:
      'SELECT id, topic, key, payload, created_at AS "createdAt", attempts, last_error AS "lastError", headers ' +
      `FROM skein_outbox_claim($1, $2, $3, $4, $5, $6::text[]) WHERE (${ASYNC_COMMIT}) IS NOT NULL`,
    values: [now, limit, token, until, max, topics],
  };
}

/** Settle a delivery held by `token`: published or retired, at `now`, with `error` (kept when null). */
export function settleQuery(
  messageId: string,
  token: string,
  status: 'published' | 'retired',
  now: number,
  error: string | null,
): Query {
  return {
    name: 'skein_outbox_settle',
    text:
      'UPDATE skein_outbox_deliveries SET status = $3, claim_token = NULL, settled_at = $4, ' +
      "last_error = coalesce($5, last_error) WHERE message_id = $1 AND status = 'pending' AND claim_token = $2",
    values: [messageId, token, status, now, error],
  };
}

/**
 * Give a claimed delivery back at `$3` with error `$4`, or retire it (diagnostic `$6`, at `$7`)
 * when it was claimed `$5` times; returns what happened, no row when `token` is not current.
 */
export function rescheduleQuery(
  messageId: string,
  token: string,
  availableAt: number,
  error: string,
  max: number,
  now: number,
): Query {
  return {
    name: 'skein_outbox_reschedule',
    text: `
UPDATE skein_outbox_deliveries SET claim_token = NULL,
  status = CASE WHEN attempts >= $5::integer THEN 'retired' ELSE 'pending' END,
  available_at = CASE WHEN attempts >= $5::integer THEN available_at ELSE $3::bigint END,
  settled_at = CASE WHEN attempts >= $5::integer THEN $6::bigint ELSE NULL END,
  last_error = CASE WHEN attempts >= $5::integer
    THEN 'retired after ' || attempts || ' failed attempts (maxDeliveryAttempts ' || attempts || '): ' || $4::text
    ELSE $4::text END
WHERE message_id = $1 AND status = 'pending' AND claim_token = $2
RETURNING status`,
    values: [messageId, token, availableAt, error, max, now],
  };
}

/** Extend a claim held by `token` to `until`. */
export function renewQuery(messageId: string, token: string, until: number): Query {
  return {
    name: 'skein_outbox_renew',
    text:
      'UPDATE skein_outbox_deliveries SET available_at = $3 ' +
      "WHERE message_id = $1 AND status = 'pending' AND claim_token = $2",
    values: [messageId, token, until],
  };
}

/** One delivery with its message. */
export function selectDeliveryQuery(messageId: string): Query {
  return {
    name: 'skein_outbox_get',
    text: `SELECT ${DELIVERY_COLUMNS} FROM ${JOINED} WHERE d.message_id = $1`,
    values: [messageId],
  };
}

/**
 * Deliveries after a message id, in one status or any, ordered by id, through
 * `skein_outbox_list` (migration 0016): each read from the index that holds just those rows, with
 * a plan that does not depend on statistics, so no page walks the deliveries of another status.
 */
export function listDeliveriesQuery(status: string | null, after: string, limit: number): Query {
  return {
    name: 'skein_outbox_list',
    text:
      'SELECT id, topic, key, payload, created_at AS "createdAt", status, available_at AS "availableAt", ' +
      'attempts, claim_token AS "claimToken", last_error AS "lastError", settled_at AS "settledAt", headers ' +
      'FROM skein_outbox_list($1, $2, $3)',
    values: [status, after, limit],
  };
}

/** Which of an append's message ids the ledger holds, read after a unique violation on it. */
export function takenMessageIdsQuery(request: AppendRequest): Query {
  return {
    name: 'skein_outbox_taken_ids',
    text: 'SELECT message_id AS id FROM skein_outbox_events WHERE message_id = ANY ($1::text[])',
    values: [(request.outbox ?? []).map((m) => m.id)],
  };
}

/**
 * Mark many claimed deliveries published in one statement, through `skein_outbox_publish_all`
 * (migration 0015); returns the ids it marked. Each id is paired with its own token, so a
 * token settles only the delivery it was given for.
 */
export function publishAllQuery(claims: readonly { id: string; token: string }[], now: number): Query {
  return {
    name: 'skein_outbox_publish_all',
    text: `SELECT id FROM skein_outbox_publish_all($1::text[], $2::text[], $3) AS id WHERE (${ASYNC_COMMIT}) IS NOT NULL`,
    values: [claims.map((c) => c.id), claims.map((c) => c.token), now],
  };
}

/**
 * Delete up to `limit` published deliveries settled before `before` (oldest message first,
 * skipping rows another pruner holds) and their ledger rows, in one statement, through
 * `skein_outbox_prune` (migration 0016); its one row is how many it deleted.
 */
export function pruneQuery(before: number, limit: number): Query {
  return {
    name: 'skein_outbox_prune',
    text: 'SELECT skein_outbox_prune($1, $2) AS pruned',
    values: [before, limit],
  };
}
