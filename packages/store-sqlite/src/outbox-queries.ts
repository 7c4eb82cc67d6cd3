/** The outbox's statements (migrations 0010 and 0013), one query per function, each prepared once. */
import type { DeliveryStatus, OutboxDelivery, OutboxMessage } from '@skein/workflow-runtime/spi';
import type Database from 'better-sqlite3';

type Db = Database.Database;

/** Insert a message into the ledger and its pending delivery. */
export function insertOutboxMessage(db: Db): (message: OutboxMessage) => void {
  const ledger = db.prepare<[string, string, string, string, number, string | null]>(
    'INSERT INTO skein_outbox_events (message_id, topic, key, payload, created_at, headers) ' +
      'VALUES (?, ?, ?, ?, ?, ?)',
  );
  const delivery = db.prepare<[string, string, number]>(
    "INSERT INTO skein_outbox_deliveries (message_id, topic, status, available_at) VALUES (?, ?, 'pending', ?)",
  );
  return (m) => {
    ledger.run(m.id, m.topic, m.key, m.payload, m.createdAt, headersText(m.headers));
    delivery.run(m.id, m.topic, m.availableAt ?? m.createdAt);
  };
}

const DELIVERY_COLUMNS =
  'd.message_id AS id, e.topic, e.key, e.payload, e.created_at AS createdAt, d.status, ' +
  'd.available_at AS availableAt, d.attempts, d.claim_token AS claimToken, d.last_error AS lastError, ' +
  'd.settled_at AS settledAt, e.headers';
const JOINED = 'skein_outbox_deliveries d JOIN skein_outbox_events e ON e.message_id = d.message_id';

/** A delivery as its statements read it: the headers as their JSON text. */
export type DeliveryRow = Omit<OutboxDelivery, 'headers'> & { headers: string | null };

/** The headers column of a message: JSON, or NULL when it has none. */
export function headersText(headers: Readonly<Record<string, string>> | undefined): string | null {
  return headers === undefined || Object.keys(headers).length === 0 ? null : JSON.stringify(headers);
}

/** The delivery of a row read by `DELIVERY_COLUMNS`. */
export function deliveryOf(row: DeliveryRow): OutboxDelivery {
  const { headers, ...rest } = row;
  return headers === null ? rest : { ...rest, headers: JSON.parse(headers) as Record<string, string> };
}

/** A pending delivery a claim may take: its message, attempts and last error. */
export type AvailableRow = Pick<
  OutboxDelivery,
  'id' | 'topic' | 'key' | 'payload' | 'createdAt' | 'attempts' | 'lastError'
> & { headers: string | null };

/**
 * Pending deliveries available at `now` with their messages, oldest available first: a claim
 * reads what it hands out here and does not read it back. The walk is the partial index
 * `skein_outbox_deliveries_available` (named: without statistics the planner would take the
 * status index, read and sort every pending delivery with its message on each claim), and the
 * ledger is joined only for the rows taken.
 */
export function selectAvailable(
  db: Db,
): Database.Statement<{ now: number; limit: number; topics: string | null }, AvailableRow> {
  return db.prepare<{ now: number; limit: number; topics: string | null }, AvailableRow>(
    'SELECT d.message_id AS id, e.topic, e.key, e.payload, e.created_at AS createdAt, d.attempts, ' +
      'd.last_error AS lastError, e.headers FROM (' +
      'SELECT message_id, attempts, last_error, available_at FROM skein_outbox_deliveries ' +
      'INDEXED BY skein_outbox_deliveries_available ' +
      "WHERE status = 'pending' AND available_at <= @now " +
      'AND (@topics IS NULL OR topic IN (SELECT value FROM json_each(@topics))) ' +
      'ORDER BY available_at, message_id LIMIT @limit) d ' +
      'JOIN skein_outbox_events e ON e.message_id = d.message_id ORDER BY d.available_at, d.message_id',
  );
}

/** Claim the pending deliveries of a JSON array of message ids under `token` until `until`, in one statement. */
export function claimDeliveries(db: Db): Database.Statement<{ ids: string; token: string; until: number }> {
  return db.prepare<{ ids: string; token: string; until: number }>(
    'UPDATE skein_outbox_deliveries SET attempts = attempts + 1, claim_token = @token, available_at = @until ' +
      "WHERE message_id IN (SELECT value FROM json_each(@ids)) AND status = 'pending'",
  );
}

/**
 * Mark published, in one statement, the deliveries of a JSON array of message ids that `token`
 * holds; returns the ids it marked (plucked: strings, not rows).
 */
export function publishClaimed(
  db: Db,
): Database.Statement<{ ids: string; token: string; now: number }, string> {
  return db
    .prepare<{ ids: string; token: string; now: number }, string>(
      "UPDATE skein_outbox_deliveries SET status = 'published', claim_token = NULL, settled_at = @now " +
        "WHERE message_id IN (SELECT value FROM json_each(@ids)) AND status = 'pending' AND claim_token = @token " +
        'RETURNING message_id',
    )
    .pluck();
}

/** Settle a delivery held by `token`: published or retired, at `now`, with `error`. */
export function settleDelivery(db: Db): Database.Statement<{
  id: string;
  token: string | null;
  status: DeliveryStatus;
  now: number;
  error: string | null;
}> {
  return db.prepare<{
    id: string;
    token: string | null;
    status: DeliveryStatus;
    now: number;
    error: string | null;
  }>(
    'UPDATE skein_outbox_deliveries SET status = @status, claim_token = NULL, settled_at = @now, ' +
      'last_error = coalesce(@error, last_error) ' +
      "WHERE message_id = @id AND status = 'pending' AND claim_token IS @token",
  );
}

/** Retire a pending delivery whose claims never settled, whoever claimed it last. */
export function retireUnsettled(db: Db): Database.Statement<{ id: string; now: number; error: string }> {
  return db.prepare<{ id: string; now: number; error: string }>(
    "UPDATE skein_outbox_deliveries SET status = 'retired', claim_token = NULL, settled_at = @now, " +
      "last_error = @error WHERE message_id = @id AND status = 'pending'",
  );
}

/** Give a claimed delivery back, available at `at`, with the attempt's error. */
export function rescheduleDelivery(
  db: Db,
): Database.Statement<{ id: string; token: string; at: number; error: string; max: number }> {
  return db.prepare<{ id: string; token: string; at: number; error: string; max: number }>(
    'UPDATE skein_outbox_deliveries SET claim_token = NULL, available_at = @at, last_error = @error ' +
      "WHERE message_id = @id AND status = 'pending' AND claim_token = @token AND attempts < @max",
  );
}

/** Extend a claim held by `token` to `until`. */
export function renewDelivery(db: Db): Database.Statement<{ id: string; token: string; until: number }> {
  return db.prepare<{ id: string; token: string; until: number }>(
    'UPDATE skein_outbox_deliveries SET available_at = @until ' +
      "WHERE message_id = @id AND status = 'pending' AND claim_token = @token",
  );
}

/** One delivery with its message. */
export function selectDelivery(db: Db): Database.Statement<[string], DeliveryRow> {
  return db.prepare<[string], DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM ${JOINED} WHERE d.message_id = ?`,
  );
}

/** Deliveries after a message id, in any status, ordered by id. */
export function selectDeliveries(db: Db): Database.Statement<{ after: string; limit: number }, DeliveryRow> {
  return db.prepare<{ after: string; limit: number }, DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM ${JOINED} WHERE d.message_id > @after ORDER BY d.message_id LIMIT @limit`,
  );
}

/**
 * Deliveries in one status after a message id, ordered by id: a statement of its own, so the
 * walk is the (status, message_id) index and not every delivery from the first.
 */
export function selectDeliveriesIn(
  db: Db,
): Database.Statement<{ status: string; after: string; limit: number }, DeliveryRow> {
  return db.prepare<{ status: string; after: string; limit: number }, DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM skein_outbox_deliveries d INDEXED BY skein_outbox_deliveries_status ` +
      'JOIN skein_outbox_events e ON e.message_id = d.message_id WHERE d.status = @status AND d.message_id > @after ORDER BY d.message_id LIMIT @limit',
  );
}

/** Published deliveries settled before `before`, oldest message first: their ids. */
export function selectPrunable(
  db: Db,
): Database.Statement<{ before: number; limit: number }, { id: string }> {
  return db.prepare<{ before: number; limit: number }, { id: string }>(
    "SELECT message_id AS id FROM skein_outbox_deliveries WHERE status = 'published' " +
      'AND settled_at < @before ORDER BY message_id LIMIT @limit',
  );
}

/** Delete the deliveries and then the ledger rows of a JSON array of message ids. */
export function deleteMessages(db: Db): (ids: string) => void {
  const deliveries = db.prepare<[string]>(
    'DELETE FROM skein_outbox_deliveries WHERE message_id IN (SELECT value FROM json_each(?))',
  );
  const ledger = db.prepare<[string]>(
    'DELETE FROM skein_outbox_events WHERE message_id IN (SELECT value FROM json_each(?))',
  );
  return (ids) => {
    deliveries.run(ids);
    ledger.run(ids);
  };
}
