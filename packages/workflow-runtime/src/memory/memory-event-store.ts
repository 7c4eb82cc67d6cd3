/** In-memory {@link EventStore}: the reference implementation, for tests and examples. */
import { checkAppend, type ExecutionHead } from '../append-checks.js';
import { DEFAULT_MAX_PAYLOAD_BYTES } from '../codec.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import { DuplicateEnvelopeIdError, InvalidAppendError } from '../errors.js';
import { type ExecutionStatus, type StoredEvent, statusAfter } from '../events.js';
import { listLimit } from '../list-limit.js';
import type {
  AppendRequest,
  AppendResult,
  EventStore,
  ExecutionPage,
  ExecutionSummary,
  ListExecutionsQuery,
  PendingTakeover,
} from '../spi.js';
import type { MemoryOutboxStore } from './memory-outbox-store.js';

interface Execution extends ExecutionHead {
  events: StoredEvent[];
  updatedAt: number;
}

/** Options of {@link MemoryEventStore}. */
export interface MemoryEventStoreOptions {
  /** Per-event payload limit in bytes (default: 1 MiB). */
  maxPayloadBytes?: number;
  /** The outbox an append's `outbox` messages go to, atomically with its events (default: none; appends with messages are refused). */
  outbox?: MemoryOutboxStore;
}

/** An event store held in memory; everything is lost with the process. */
export class MemoryEventStore implements EventStore {
  private readonly executions = new Map<string, Execution>();
  private readonly envelopeIds = new Set<string>();
  private readonly maxPayloadBytes: number;
  private readonly outbox: MemoryOutboxStore | undefined;

  constructor(options: MemoryEventStoreOptions = {}) {
    this.maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
    this.outbox = options.outbox;
  }

  async append(request: AppendRequest): Promise<AppendResult> {
    const execution = this.head(request.executionId);
    checkAppend(execution, request, this.maxPayloadBytes);
    const seen = new Set<string>();
    for (const event of request.events) {
      if (this.envelopeIds.has(event.envelopeId) || seen.has(event.envelopeId)) {
        throw new DuplicateEnvelopeIdError(request.executionId, event.envelopeId);
      }
      seen.add(event.envelopeId);
    }
    const messages = request.outbox ?? [];
    if (messages.length > 0) {
      if (this.outbox === undefined)
        throw new InvalidAppendError(request.executionId, 'this event store has no outbox for its messages');
      const taken = this.outbox.takenId(messages);
      if (taken !== undefined)
        throw new InvalidAppendError(request.executionId, `outbox message id "${taken}" is taken`);
    }
    let status = execution.status;
    request.events.forEach((event, i) => {
      execution.events.push({
        ...event,
        executionId: request.executionId,
        seq: request.expectedSeq + i,
        fence: request.fence,
      });
      this.envelopeIds.add(event.envelopeId);
      status = statusAfter(status, event.type);
      execution.updatedAt = event.recordedAt;
    });
    if (request.expectedSeq === 0) execution.workflow = request.workflow;
    execution.lastSeq = request.expectedSeq + request.events.length - 1;
    execution.status = status;
    if (messages.length > 0) this.outbox!.insert(messages);
    return { lastSeq: execution.lastSeq, status: status as ExecutionStatus };
  }

  async read(executionId: string, fromSeq = 0, limit = Number.POSITIVE_INFINITY): Promise<StoredEvent[]> {
    const events = this.executions.get(executionId)?.events ?? [];
    return events.slice(fromSeq, fromSeq + limit).map((event) => ({ ...event }));
  }

  async acquireFence(executionId: string): Promise<number> {
    const execution = this.head(executionId);
    execution.fence += 1;
    return execution.fence;
  }

  async takeOverPending(executionIds: readonly string[]): Promise<PendingTakeover[]> {
    const taken: PendingTakeover[] = [];
    for (const executionId of new Set(executionIds)) {
      const execution = this.executions.get(executionId);
      if (execution?.status !== 'pending') continue;
      execution.fence += 1;
      taken.push({
        executionId,
        fence: execution.fence,
        events: execution.events.map((event) => ({ ...event })),
      });
    }
    return taken;
  }

  async currentFence(executionId: string): Promise<number> {
    return this.executions.get(executionId)?.fence ?? 0;
  }

  async getExecution(executionId: string): Promise<ExecutionSummary | null> {
    const execution = this.executions.get(executionId);
    return execution === undefined || execution.lastSeq < 0 ? null : summary(executionId, execution);
  }

  /** The workflow of an execution whose seq 0 exists, else undefined (synchronous, for the memory timer store). */
  workflowOf(executionId: string): string | undefined {
    const execution = this.executions.get(executionId);
    return execution === undefined || execution.lastSeq < 0 ? undefined : execution.workflow;
  }

  async listExecutions(query: ListExecutionsQuery = {}): Promise<ExecutionPage> {
    const limit = listLimit(query.limit);
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const ids = [...this.executions.keys()].sort();
    const items: ExecutionSummary[] = [];
    for (const id of ids) {
      if (after !== undefined && id <= after) continue;
      const execution = this.executions.get(id)!;
      if (execution.lastSeq < 0) continue;
      if (query.status !== undefined && !query.status.includes(execution.status!)) continue;
      if (query.workflow !== undefined && execution.workflow !== query.workflow) continue;
      if (items.length === limit)
        return { items, nextCursor: encodeCursor(items[items.length - 1]!.executionId) };
      items.push(summary(id, execution));
    }
    return { items };
  }

  private head(executionId: string): Execution {
    let execution = this.executions.get(executionId);
    if (execution === undefined) {
      execution = { fence: 0, lastSeq: -1, status: undefined, workflow: undefined, events: [], updatedAt: 0 };
      this.executions.set(executionId, execution);
    }
    return execution;
  }
}

function summary(executionId: string, execution: Execution): ExecutionSummary {
  return {
    executionId,
    workflow: execution.workflow!,
    status: execution.status!,
    sequence: execution.lastSeq,
    updatedAt: execution.updatedAt,
  };
}
