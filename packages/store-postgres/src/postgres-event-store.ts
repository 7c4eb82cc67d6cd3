/** {@link EventStore} on PostgreSQL: every call is one statement on a pooled connection. */
import { type EventStore, isTerminalStatus, StorageWriteError } from '@skein/workflow-runtime';
import {
  type AppendRequest,
  type AppendResult,
  decodeCursor,
  type ExecutionPage,
  type ExecutionSummary,
  encodeCursor,
  type ListExecutionsQuery,
  listLimit,
  type PendingTakeover,
  type StoredEvent,
} from '@skein/workflow-runtime/spi';
import { appendEvents } from './append.js';
import type { Database, Query } from './database.js';
import { NulInTextError, StoreClosedError } from './errors.js';
import {
  listAll,
  listByStatus,
  listByWorkflow,
  listByWorkflowAndStatus,
  nextFence,
  selectEvents,
  selectExecution,
  selectFence,
  takeOverPending,
} from './event-queries.js';
import { HeadHints } from './head-hints.js';
import { hasNul, refuseNul } from './nul-text.js';
import { PerKeyQueue } from './per-key-queue.js';
import { ShortAppends } from './short-appends.js';
import { channelName, WAKEUP_PENDING } from './wakeups.js';

/**
 * The event log in PostgreSQL. An append is one round trip: the checks and the inserts are one
 * statement, a short one for a new execution's start, or for a step or a status move right
 * after the last seq this process wrote or read, the full one otherwise (see
 * `adr/0009-postgres-one-statement-append.md` and `adr/0018-postgres-step-append.md`). Appends
 * of different executions run side by side on the pool, short ones grouped under load
 * (`adr/0019-group-every-short-append.md`), each with its own outcome (L4); appends of one
 * execution apply in the order they were submitted, one at a time.
 */
export class PostgresEventStore implements EventStore {
  private readonly ordered = new PerKeyQueue();
  /** What this process's last append or summary read left of each execution's head: a hint for the next. */
  private readonly hints = new HeadHints();
  /** Short appends, grouped while every statement slot is taken. */
  private readonly shortAppends: ShortAppends;

  /**
   * @param db the shared pool, with the schema migrated (see `openPostgresStores`).
   * @param maxPayloadBytes per-event payload limit in UTF-8 bytes.
   */
  constructor(
    private readonly db: Database,
    private readonly maxPayloadBytes: number,
  ) {
    const pending = channelName(db.schema, WAKEUP_PENDING);
    this.shortAppends = new ShortAppends(db, pending, Math.max(1, db.options.poolSize - 1));
  }

  append(request: AppendRequest): Promise<AppendResult> {
    const executionId = String(request.executionId);
    return this.ordered.run(executionId, async () => {
      try {
        const hint = this.hints.get(executionId);
        const result = await appendEvents(this.db, this.shortAppends, request, this.maxPayloadBytes, hint);
        this.hints.set(executionId, isTerminalStatus(result.status) ? undefined : result);
        return result;
      } catch (error) {
        this.hints.set(executionId, undefined);
        throw error;
      }
    });
  }

  async read(executionId: string, fromSeq = 0, limit = Number.POSITIVE_INFINITY): Promise<StoredEvent[]> {
    if (hasNul(executionId)) return [];
    const query = selectEvents(executionId, fromSeq, Number.isFinite(limit) ? limit : null);
    return (await this.db.query<StoredEvent>('read', query)).rows;
  }

  async acquireFence(executionId: string): Promise<number> {
    if (hasNul(executionId)) throw new NulInTextError(executionId, 'the execution id');
    try {
      return (await this.db.query<{ fence: number }>('acquireFence', nextFence(executionId))).rows[0]!.fence;
    } catch (error) {
      if (error instanceof StoreClosedError) throw error;
      throw new StorageWriteError(executionId, { cause: error });
    }
  }

  /**
   * One statement for the batch. Each execution taken over keeps a hint at its last seq, so the
   * run's first append (its move from pending) takes the short statement.
   */
  async takeOverPending(executionIds: readonly string[]): Promise<PendingTakeover[]> {
    const ids = [...new Set(executionIds.filter((id) => !hasNul(id)))].sort();
    if (ids.length === 0) return [];
    const rows = (
      await this.db.query<StoredEvent & { takenFence: number }>('takeOverPending', takeOverPending(ids))
    ).rows;
    const taken = new Map<string, PendingTakeover>();
    for (const { takenFence, ...event } of rows) {
      let one = taken.get(event.executionId);
      if (one === undefined) {
        one = { executionId: event.executionId, fence: takenFence, events: [] };
        taken.set(event.executionId, one);
      }
      one.events.push(event);
    }
    for (const { executionId, events } of taken.values())
      this.hints.set(executionId, { lastSeq: events[events.length - 1]!.seq, status: 'pending' });
    return [...taken.values()];
  }

  async currentFence(executionId: string): Promise<number> {
    if (hasNul(executionId)) return 0;
    const rows = (await this.db.query<{ fence: number }>('currentFence', selectFence(executionId))).rows;
    return rows[0]?.fence ?? 0;
  }

  async getExecution(executionId: string): Promise<ExecutionSummary | null> {
    if (hasNul(executionId)) return null;
    const rows = (await this.db.query<ExecutionSummary>('getExecution', selectExecution(executionId))).rows;
    const summary = rows[0] ?? null;
    // What the database held a moment ago is as good a hint as this process's own last append:
    // the seq exists (a log never shrinks), and the short statements check the rest. A
    // supervisor's claim reads the execution right before taking it over, so the takeover's
    // first append (the move from pending or running) takes the short statement.
    if (summary !== null && !isTerminalStatus(summary.status)) {
      this.hints.set(executionId, { lastSeq: summary.sequence, status: summary.status });
    }
    return summary;
  }

  /**
   * A page of the execution index. A filter or cursor holding U+0000 is refused with
   * `NulInTextError` before any query: no execution id, workflow or status can hold it.
   */
  async listExecutions(query: ListExecutionsQuery = {}): Promise<ExecutionPage> {
    const limit = listLimit(query.limit);
    const after = query.cursor === undefined ? '' : decodeCursor(query.cursor);
    refuseNul('events.listExecutions', undefined, {
      'the workflow filter': query.workflow ?? '',
      'the status filter': query.status?.join(',') ?? '',
      'the cursor': after,
    });
    const rows = (await this.db.query<ExecutionSummary>('listExecutions', pageQuery(query, after, limit + 1)))
      .rows;
    if (rows.length <= limit) return { items: rows };
    const items = rows.slice(0, limit);
    return { items, nextCursor: encodeCursor(items[items.length - 1]!.executionId) };
  }
}

/** The indexed query for one filter shape. */
function pageQuery({ status, workflow }: ListExecutionsQuery, after: string, n: number): Query {
  if (status === undefined)
    return workflow === undefined ? listAll(after, n) : listByWorkflow(workflow, after, n);
  return workflow === undefined
    ? listByStatus(status, after, n)
    : listByWorkflowAndStatus(workflow, status, after, n);
}
