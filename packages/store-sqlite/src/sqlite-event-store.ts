/** {@link EventStore} on SQLite: appends are group-committed, everything else is one statement. */
import { DEFAULT_MAX_PAYLOAD_BYTES, type EventStore, StorageWriteError } from '@skein/workflow-runtime';
import {
  type AppendRequest,
  type AppendResult,
  decodeCursor,
  type ExecutionPage,
  type ExecutionSummary,
  encodeCursor,
  GroupCommit,
  type ListExecutionsQuery,
  listLimit,
  type PendingTakeover,
  type StoredEvent,
} from '@skein/workflow-runtime/spi';
import type Database from 'better-sqlite3';
import { type AppendStatements, flushAppends, prepareAppendStatements } from './append-batch.js';
import { StoreClosedError } from './errors.js';
import {
  listAll,
  listByStatus,
  listByWorkflow,
  listByWorkflowAndStatus,
  nextFence,
  nextPendingFence,
  selectEvents,
  selectExecution,
  selectFence,
} from './event-queries.js';
import { compareCodePoints } from './order.js';

type ReadStatements = ReturnType<typeof prepareReadStatements>;

/** Everything but the append path, prepared once. */
function prepareReadStatements(db: Database.Database) {
  return {
    nextFence: nextFence(db),
    nextPendingFence: nextPendingFence(db),
    selectFence: selectFence(db),
    selectEvents: selectEvents(db),
    selectExecution: selectExecution(db),
    listAll: listAll(db),
    listByStatus: listByStatus(db),
    listByWorkflow: listByWorkflow(db),
    listByWorkflowAndStatus: listByWorkflowAndStatus(db),
  };
}

/** Options of {@link SqliteEventStore}. */
export interface SqliteEventStoreOptions {
  /** Per-event payload limit in UTF-8 bytes (default: 1 MiB). */
  maxPayloadBytes?: number;
  /** Most appends committed in one transaction (default: 1000). */
  maxBatch?: number;
}

/**
 * The event log in SQLite. Appends submitted while the event loop is busy are committed in
 * one transaction, each with its own outcome (L4); see `adr/0002-sqlite-group-commit.md`.
 */
export class SqliteEventStore implements EventStore {
  private readonly appends: AppendStatements;
  private readonly groupCommit: GroupCommit<AppendRequest, AppendResult>;
  private readonly statements: ReadStatements;
  private closed = false;

  /**
   * @param db an open connection with the schema migrated (see `openSqliteStores`).
   */
  constructor(
    private readonly db: Database.Database,
    options: SqliteEventStoreOptions = {},
  ) {
    const maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
    this.appends = prepareAppendStatements(db);
    this.groupCommit = new GroupCommit((batch) => flushAppends(this.appends, batch, maxPayloadBytes), {
      maxBatch: options.maxBatch ?? 1000,
    });
    this.statements = prepareReadStatements(db);
  }

  append(request: AppendRequest): Promise<AppendResult> {
    if (this.closed) return Promise.reject(new StoreClosedError(this.db.name, 'append'));
    return this.groupCommit.submit(request);
  }

  async read(executionId: string, fromSeq = 0, limit = Number.POSITIVE_INFINITY): Promise<StoredEvent[]> {
    return this.statements.selectEvents.all(executionId, fromSeq, Number.isFinite(limit) ? limit : -1);
  }

  async acquireFence(executionId: string): Promise<number> {
    try {
      this.appends.heads.forget(executionId);
      return this.statements.nextFence.get(executionId)!;
    } catch (error) {
      throw new StorageWriteError(executionId, { cause: error });
    }
  }

  /** One transaction for the batch: each fence and its log read together. */
  async takeOverPending(executionIds: readonly string[]): Promise<PendingTakeover[]> {
    const ids = [...new Set(executionIds)];
    if (ids.length === 0) return [];
    const take = this.db.transaction(() => {
      const taken: PendingTakeover[] = [];
      for (const executionId of ids) {
        const fence = this.statements.nextPendingFence.get(executionId);
        if (fence === undefined) continue;
        this.appends.heads.forget(executionId);
        taken.push({ executionId, fence, events: this.statements.selectEvents.all(executionId, 0, -1) });
      }
      return taken;
    });
    try {
      return take.immediate();
    } catch (error) {
      throw new StorageWriteError(ids[0]!, { cause: error });
    }
  }

  async currentFence(executionId: string): Promise<number> {
    return this.statements.selectFence.get(executionId) ?? 0;
  }

  async getExecution(executionId: string): Promise<ExecutionSummary | null> {
    return this.statements.selectExecution.get(executionId) ?? null;
  }

  async listExecutions(query: ListExecutionsQuery = {}): Promise<ExecutionPage> {
    const limit = listLimit(query.limit);
    const after = query.cursor === undefined ? '' : decodeCursor(query.cursor);
    const rows = this.page(query, after, limit + 1);
    if (rows.length <= limit) return { items: rows };
    const items = rows.slice(0, limit);
    return { items, nextCursor: encodeCursor(items[items.length - 1]!.executionId) };
  }

  /**
   * Refuse new appends and wait until every queued one is flushed. The connection stays open;
   * the caller closes it afterwards.
   */
  async drain(): Promise<void> {
    this.closed = true;
    // The flush is synchronous, so once the queue is empty no batch is half-done.
    while (this.groupCommit.pending > 0) await new Promise((resolve) => setImmediate(resolve));
  }

  /** Up to `n` rows after `after`; several statuses are one indexed range each, merged by id. */
  private page(query: ListExecutionsQuery, after: string, n: number): ExecutionSummary[] {
    const { workflow } = query;
    const s = this.statements;
    if (query.status === undefined) {
      return workflow === undefined ? s.listAll.all(after, n) : s.listByWorkflow.all(workflow, after, n);
    }
    const ranges = [...new Set(query.status)].map((status) =>
      workflow === undefined
        ? s.listByStatus.all(status, after, n)
        : s.listByWorkflowAndStatus.all(workflow, status, after, n),
    );
    if (ranges.length === 1) return ranges[0]!;
    return ranges
      .flat()
      .sort((a, b) => compareCodePoints(a.executionId, b.executionId))
      .slice(0, n);
  }
}
