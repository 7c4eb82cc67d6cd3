/**
 * The outbox SPI (docs/outbox.md, docs/architecture.md#outbox): a message that must leave the
 * store is written to the store's outbox in the same transaction as the state change that
 * causes it (O1), then relayed. The outbox is two things: the ledger (`outbox_events`, one
 * row per message, never changed) and the delivery queue (one delivery per message: pending,
 * published or retired, with a claim token and an availability time).
 *
 * A delivery is claimed with a fresh token and becomes available again at `now + leaseMs`
 * unless settled first, so a crashed claimer's deliveries come back when the window passes.
 * Only the current token may mark a delivery published, reschedule it or retire it.
 */
import { z } from 'zod';
import { InvalidInputError } from './errors.js';
import { illFormedReason } from './ids.js';

/** A message to write to the outbox; the payload is already encoded (text, usually JSON). */
export interface OutboxMessage {
  /** Unique id of the message (a ULID); a reused id is refused with `InvalidInputError`. */
  id: string;
  /** What the message is about; the broker's routing key (e.g. `execution.pending`). */
  topic: string;
  /** What it concerns (an execution id, say); consumers may deduplicate by it. */
  key: string;
  payload: string;
  /** Milliseconds since the epoch when the message was written. */
  createdAt: number;
  /** Not relayed before this time, in ms since the epoch (default: `createdAt`). */
  availableAt?: number;
  /**
   * String headers that travel with the message to its consumers (W3C `traceparent` and
   * `tracestate`, say), written in the same transaction; see `checkOutboxMessages` for
   * what a header may be (default: none).
   */
  headers?: Readonly<Record<string, string>>;
}

/** Where a delivery stands. */
export type DeliveryStatus = 'pending' | 'published' | 'retired';

/** One message and its delivery, as the outbox holds them. */
export interface OutboxDelivery {
  id: string;
  topic: string;
  key: string;
  payload: string;
  createdAt: number;
  status: DeliveryStatus;
  /** When it may be claimed (again); a claim moves it to the end of the claim window. */
  availableAt: number;
  /** How many times it was claimed. */
  attempts: number;
  /** Token of the newest claim (null before the first claim and once settled). */
  claimToken: string | null;
  /** Why the last attempt failed, or why it was retired (null when none did). */
  lastError: string | null;
  /** When it was marked published or retired (null while pending). */
  settledAt: number | null;
  /** The message's headers, when it was written with some. */
  headers?: Readonly<Record<string, string>>;
}

/** A delivery handed to its claimer, with the token that alone may settle it. */
export interface ClaimedDelivery extends OutboxDelivery {
  status: 'pending';
  claimToken: string;
}

/** Options of {@link OutboxStore.claim}. */
export interface ClaimDeliveriesOptions {
  /** Claim deliveries available at or before this time, in ms since the epoch (default: `Date.now()`). */
  now?: number;
  /** At most this many, an integer >= 1. */
  limit: number;
  /** The claim lapses after this long (ms) unless settled: the delivery is available again. */
  leaseMs: number;
  /** Only deliveries of these topics (default: every topic). */
  topics?: readonly string[];
  /**
   * A delivery already claimed this many times without being settled is retired instead of
   * handed out again, with a diagnostic (default: `DEFAULT_MAX_DELIVERY_ATTEMPTS`, 10).
   */
  maxDeliveryAttempts?: number;
}

/** Options of {@link OutboxStore.reschedule}. */
export interface RescheduleOptions {
  /** Available again at this time (ms since the epoch). */
  availableAt: number;
  /** Why this attempt failed. */
  error: string;
  /** Now (ms since the epoch), the retirement time if it is retired. */
  now: number;
  /**
   * A delivery that has been claimed this many times is retired instead, with `error` as its
   * diagnostic (default: `DEFAULT_MAX_DELIVERY_ATTEMPTS`, 10).
   */
  maxDeliveryAttempts?: number;
}

/** Options of {@link OutboxStore.prune}. */
export interface PruneDeliveriesOptions {
  /** Delete published deliveries settled before this time (ms since the epoch), with their ledger rows. */
  settledBefore: number;
  /** At most this many, an integer >= 1 (default: 1 000). */
  limit?: number;
}

/** What {@link OutboxStore.reschedule} did: `'lost'` when the token was no longer the delivery's. */
export type RescheduleOutcome = 'rescheduled' | 'retired' | 'lost';

/** Filter of {@link OutboxStore.list}. */
export interface ListDeliveriesQuery {
  /** Only deliveries in this status (default: all). */
  status?: DeliveryStatus;
  /** At most this many, an integer >= 1 (default: 100). */
  limit?: number;
  /** Only deliveries whose message id sorts after this one, to page (default: from the first). */
  after?: string;
}

/** The topic of the message `runtime.enqueue` writes when the runtime has `outbox: true`. */
export const EXECUTION_PENDING_TOPIC = 'execution.pending';

/** The payload of an `execution.pending` message (JSON). */
export interface ExecutionPendingPayload {
  executionId: string;
  workflow: string;
  version: number;
}

/** A delivery that fails this many times is retired, unless the caller says otherwise. */
export const DEFAULT_MAX_DELIVERY_ATTEMPTS = 10;

/**
 * The outbox of one store. Besides `write`, an event store that has an outbox writes the
 * messages of an `AppendRequest.outbox` in the append's own transaction (O1).
 */
export interface OutboxStore {
  /** Write messages (ledger rows and pending deliveries) in one transaction. */
  write(messages: readonly OutboxMessage[]): Promise<void>;
  /**
   * Claim pending deliveries available at `now`, oldest available first, each under one fresh
   * token (shared by this call's deliveries), available again at `now + leaseMs`.
   */
  claim(options: ClaimDeliveriesOptions): Promise<ClaimedDelivery[]>;
  /** Mark a claimed delivery published; false (nothing changed) when `token` is not its current claim. */
  markPublished(messageId: string, token: string, now: number): Promise<boolean>;
  /**
   * Mark many claimed deliveries published in one transaction; one answer per item, in order
   * (false where `token` is not the delivery's current claim).
   */
  markPublishedAll(claims: readonly { id: string; token: string }[], now: number): Promise<boolean[]>;
  /** Give a failed attempt back, available at `availableAt`; retired once it reached the attempt bound. */
  reschedule(messageId: string, token: string, options: RescheduleOptions): Promise<RescheduleOutcome>;
  /** Retire a claimed delivery with a diagnostic (it stays readable); false when `token` is not current. */
  retire(messageId: string, token: string, reason: string, now: number): Promise<boolean>;
  /** Extend a claim to `now + leaseMs` while its claimer works; false when `token` is not current. */
  renew(messageId: string, token: string, now: number, leaseMs: number): Promise<boolean>;
  /**
   * Delete up to `limit` published deliveries settled before `settledBefore`, oldest message
   * first, and their ledger rows, in one transaction; pending and retired ones are kept.
   * Returns how many were deleted (fewer than `limit`: nothing older is left).
   */
  prune(options: PruneDeliveriesOptions): Promise<number>;
  /** One delivery with its message, or null. */
  get(messageId: string): Promise<OutboxDelivery | null>;
  /** Deliveries ordered by message id, filtered and bounded. */
  list(query?: ListDeliveriesQuery): Promise<OutboxDelivery[]>;
}

const textSchema = z
  .string()
  .min(1)
  .max(255)
  .refine((text) => illFormedReason(text) === undefined, {
    message: 'must be well-formed Unicode (no lone surrogate)',
  });

const messageSchema = z.object({
  id: textSchema,
  topic: textSchema,
  key: z
    .string()
    .max(255)
    .refine((text) => illFormedReason(text) === undefined, {
      message: 'must be well-formed Unicode (no lone surrogate)',
    }),
  payload: z.string(),
  createdAt: z.number().int().nonnegative(),
  availableAt: z.number().int().nonnegative().optional(),
  headers: z
    .record(z.string(), z.string())
    .optional()
    .superRefine((headers, ctx) => {
      for (const issue of headerIssues(headers ?? {})) ctx.addIssue({ code: 'custom', ...issue });
    }),
});

/** Check an outbox message's headers alone; throws `InvalidInputError` naming `where` and the header. */
export function checkOutboxHeaders(headers: Readonly<Record<string, string>>, where: string): void {
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers))
    throw new InvalidInputError(where, [
      { path: '', message: `must be an object of strings, got ${typeof headers}` },
    ]);
  const issues = headerIssues(headers).map((issue) => ({
    path: issue.path.join('.'),
    message: issue.message,
  }));
  if (issues.length > 0) throw new InvalidInputError(where, issues);
}

/** Most headers one outbox message carries. */
const MAX_OUTBOX_HEADERS = 16;
/** Most UTF-16 code units of one header value (a `tracestate` may be 512 characters). */
const MAX_OUTBOX_HEADER_VALUE = 1_024;
const HEADER_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;
/** Header names of the transports' own bookkeeping (broker-amqp's `x-skein-*`, RabbitMQ's `x-*death*`). */
const RESERVED_HEADER = /^x-/;

/**
 * What is wrong with an outbox message's headers: at most `MAX_OUTBOX_HEADERS`, names in
 * lower case (`[a-z0-9][a-z0-9._-]*`, at most 64, not starting `x-`, which the transports
 * keep for themselves), values printable ASCII of at most `MAX_OUTBOX_HEADER_VALUE`.
 */
function headerIssues(headers: Readonly<Record<string, string>>): { path: string[]; message: string }[] {
  const issues: { path: string[]; message: string }[] = [];
  const names = Object.keys(headers);
  if (names.length > MAX_OUTBOX_HEADERS)
    issues.push({ path: [], message: `at most ${MAX_OUTBOX_HEADERS} headers, got ${names.length}` });
  for (const name of names) {
    const value = headers[name]!;
    if (!HEADER_NAME.test(name) || RESERVED_HEADER.test(name))
      issues.push({
        path: [name],
        message: 'a header name is lower case [a-z0-9][a-z0-9._-]*, at most 64, and does not start with x-',
      });
    else if (typeof value !== 'string')
      issues.push({ path: [name], message: `a header value is a string, got ${typeof value}` });
    else if (value.length > MAX_OUTBOX_HEADER_VALUE || !/^[\x20-\x7e]*$/.test(value))
      issues.push({
        path: [name],
        message: `a header value is printable ASCII of at most ${MAX_OUTBOX_HEADER_VALUE} characters`,
      });
  }
  return issues;
}

/**
 * Check outbox messages before anything is written (L7): every field well-formed, no message
 * id twice. Throws `InvalidInputError` naming the message and the field.
 */
export function checkOutboxMessages(messages: readonly OutboxMessage[], where = 'outbox messages'): void {
  const issues: { path: string; message: string }[] = [];
  const seen = new Set<string>();
  messages.forEach((message, i) => {
    const parsed = messageSchema.safeParse(message);
    if (!parsed.success) {
      for (const issue of parsed.error.issues)
        issues.push({ path: `[${i}].${issue.path.join('.')}`, message: issue.message });
      return;
    }
    if (seen.has(message.id)) issues.push({ path: `[${i}].id`, message: `"${message.id}" appears twice` });
    seen.add(message.id);
  });
  if (issues.length > 0) throw new InvalidInputError(where, issues);
}

/** Check claim options; throws `InvalidInputError` naming the field. Returns `now` (default: `Date.now()`). */
export function checkClaimOptions(options: ClaimDeliveriesOptions): number {
  const issues: { path: string; message: string }[] = [];
  if (!Number.isSafeInteger(options.limit) || options.limit < 1)
    issues.push({ path: 'limit', message: `must be an integer >= 1, got ${options.limit}` });
  if (!(options.leaseMs > 0))
    issues.push({ path: 'leaseMs', message: `must be > 0, got ${options.leaseMs}` });
  if (options.now !== undefined && !Number.isFinite(options.now))
    issues.push({ path: 'now', message: `must be a number of ms since the epoch, got ${options.now}` });
  const max = options.maxDeliveryAttempts;
  if (max !== undefined && (!Number.isSafeInteger(max) || max < 1))
    issues.push({ path: 'maxDeliveryAttempts', message: `must be an integer >= 1, got ${max}` });
  if (issues.length > 0) throw new InvalidInputError('outbox claim options', issues);
  return options.now ?? Date.now();
}

/** Check prune options; throws `InvalidInputError` naming the field. Returns the limit (default: 1 000). */
export function checkPruneOptions(options: PruneDeliveriesOptions): number {
  const issues: { path: string; message: string }[] = [];
  if (!Number.isSafeInteger(options?.settledBefore))
    issues.push({
      path: 'settledBefore',
      message: `must be an integer of ms since the epoch, got ${options?.settledBefore}`,
    });
  const limit = options?.limit ?? DEFAULT_PRUNE_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 1)
    issues.push({ path: 'limit', message: `must be an integer >= 1, got ${limit}` });
  if (issues.length > 0) throw new InvalidInputError('outbox prune options', issues);
  return limit;
}

/** A list query with its defaults filled in, as `checkListQuery` returns it. */
export interface CheckedListQuery {
  status: DeliveryStatus | null;
  after: string;
  limit: number;
}

const DELIVERY_STATUSES: readonly string[] = ['pending', 'published', 'retired'];

/**
 * Check a list query; throws `InvalidInputError` naming the field. Returns it with its defaults
 * (every status, from the first message id, 100 deliveries).
 */
export function checkListQuery(query: ListDeliveriesQuery | undefined): CheckedListQuery {
  const issues: { path: string; message: string }[] = [];
  const { status, after, limit = 100 } = query ?? {};
  if (status !== undefined && !DELIVERY_STATUSES.includes(status))
    issues.push({ path: 'status', message: `must be pending, published or retired, got ${String(status)}` });
  if (after !== undefined && typeof after !== 'string')
    issues.push({ path: 'after', message: `must be a message id (a string), got ${typeof after}` });
  if (!Number.isSafeInteger(limit) || limit < 1)
    issues.push({ path: 'limit', message: `must be an integer >= 1, got ${limit}` });
  if (issues.length > 0) throw new InvalidInputError('outbox list query', issues);
  return { status: status ?? null, after: after ?? '', limit };
}

/** Deliveries one `prune` deletes at most, unless the caller says otherwise. */
export const DEFAULT_PRUNE_LIMIT = 1_000;

/** The diagnostic of a delivery retired at claim time: its claimers never settled it. */
export function unsettledDiagnostic(attempts: number, lastError: string | null): string {
  return (
    `retired after ${attempts} claims that never settled (maxDeliveryAttempts ${attempts})` +
    (lastError === null ? '' : `; last error: ${lastError}`)
  );
}

/** The diagnostic of a delivery retired on its last failed attempt. */
export function exhaustedDiagnostic(attempts: number, error: string): string {
  return `retired after ${attempts} failed attempts (maxDeliveryAttempts ${attempts}): ${error}`;
}
