/**
 * Tenancy over one event store: every execution id is stored as `<tenant>/<id>`, so one
 * tenant can neither read nor write another's executions, and listing shows only the
 * tenant's own. Ids and errors leave in the caller's unscoped form.
 */
import { decodeCursor, encodeCursor } from './cursor.js';
import {
  DuplicateEnvelopeIdError,
  DuplicateSequenceError,
  ExecutionAlreadyExistsError,
  ExecutionTerminatedError,
  FenceNotGrantedError,
  SequenceGapError,
  StaleFenceError,
  StorageWriteError,
} from './errors.js';
import type { StoredEvent } from './events.js';
import type {
  AppendRequest,
  AppendResult,
  EventStore,
  ExecutionPage,
  ExecutionSummary,
  ListExecutionsQuery,
  PendingTakeover,
} from './spi.js';
import { TENANT_SCOPE, type TenantScoped, tenantPrefix } from './tenancy.js';

/**
 * An {@link EventStore} that keeps one tenant's executions apart from every other's. A
 * runtime needs every store scoped, not only this one: give it `tenantScopedStores(stores,
 * tenant)` (a runtime refuses stores scoped in part with `TenantScopeError`).
 * @example
 * const acme = new TenantScopedEventStore(stores.events, 'acme');
 * const { items } = await acme.listExecutions({ status: ['failed'] }); // acme's only
 */
export class TenantScopedEventStore implements EventStore, TenantScoped {
  private readonly prefix: string;
  readonly [TENANT_SCOPE]: string;
  /** The inner store's `takeOverPending` over the tenant's ids; absent when the inner store has none. */
  readonly takeOverPending?: (executionIds: readonly string[]) => Promise<PendingTakeover[]>;

  /** @param tenant a non-empty, well-formed tenant name without `/`. */
  constructor(
    private readonly inner: EventStore,
    readonly tenant: string,
  ) {
    this.prefix = tenantPrefix(tenant, 'TenantScopedEventStore');
    this[TENANT_SCOPE] = tenant;
    const takeOverPending = inner.takeOverPending?.bind(inner);
    if (takeOverPending !== undefined)
      this.takeOverPending = (ids) => this.takeOverPendingWith(takeOverPending, ids);
  }

  private async takeOverPendingWith(
    takeOverPending: (executionIds: readonly string[]) => Promise<PendingTakeover[]>,
    executionIds: readonly string[],
  ): Promise<PendingTakeover[]> {
    let taken: PendingTakeover[];
    try {
      taken = await takeOverPending(executionIds.map((id) => this.scope(id)));
    } catch (error) {
      const named =
        error instanceof Error ? (error as Error & { executionId?: unknown }).executionId : undefined;
      if (typeof named !== 'string' || !named.startsWith(this.prefix)) throw error;
      throw rescope(error, named, named.slice(this.prefix.length));
    }
    return taken.map(({ executionId, fence, events }) => {
      const unscoped = executionId.slice(this.prefix.length);
      return {
        executionId: unscoped,
        fence,
        events: events.map((event) => ({ ...event, executionId: unscoped })),
      };
    });
  }

  append(request: AppendRequest): Promise<AppendResult> {
    const id = request.executionId;
    return this.scoped(id, () => this.inner.append({ ...request, executionId: this.scope(id) }));
  }

  async read(executionId: string, fromSeq?: number, limit?: number): Promise<StoredEvent[]> {
    const events = await this.scoped(executionId, () =>
      this.inner.read(this.scope(executionId), fromSeq, limit),
    );
    return events.map((event) => ({ ...event, executionId }));
  }

  acquireFence(executionId: string): Promise<number> {
    return this.scoped(executionId, () => this.inner.acquireFence(this.scope(executionId)));
  }

  currentFence(executionId: string): Promise<number> {
    return this.scoped(executionId, () => this.inner.currentFence(this.scope(executionId)));
  }

  async getExecution(executionId: string): Promise<ExecutionSummary | null> {
    const found = await this.scoped(executionId, () => this.inner.getExecution(this.scope(executionId)));
    return found === null ? null : { ...found, executionId };
  }

  /** The tenant's executions only, with unscoped ids; cursors are the unscoped last id's. */
  async listExecutions(query: ListExecutionsQuery = {}): Promise<ExecutionPage> {
    // Ids sort by their prefix first, so the tenant's executions are one contiguous run.
    const start = query.cursor === undefined ? this.prefix : this.scope(decodeCursor(query.cursor));
    const page = await this.inner.listExecutions({ ...query, cursor: encodeCursor(start) });
    const items: ExecutionSummary[] = [];
    for (const item of page.items) {
      if (!item.executionId.startsWith(this.prefix)) return { items };
      items.push({ ...item, executionId: item.executionId.slice(this.prefix.length) });
    }
    const last = items.at(-1);
    return page.nextCursor === undefined || last === undefined
      ? { items }
      : { items, nextCursor: encodeCursor(last.executionId) };
  }

  private scope(executionId: string): string {
    return `${this.prefix}${executionId}`;
  }

  /** Run `call`; re-raise its error naming the unscoped id, with the original as `cause`. */
  private async scoped<T>(executionId: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw rescope(error, this.scope(executionId), executionId);
    }
  }
}

/** The same refusal about `unscoped`; matched by name, so errors of another package copy work too. */
function rescope(error: unknown, scoped: string, unscoped: string): unknown {
  if (!(error instanceof Error)) return error;
  const e = error as Error & Record<string, unknown>;
  if (e.executionId !== scoped) return error;
  const cause = { cause: error };
  switch (e.name) {
    case 'ExecutionAlreadyExistsError':
      return new ExecutionAlreadyExistsError(unscoped, e.existingWorkflow as string | undefined, cause);
    case 'DuplicateSequenceError':
      return new DuplicateSequenceError(unscoped, e.seq as number, cause);
    case 'DuplicateEnvelopeIdError':
      return new DuplicateEnvelopeIdError(unscoped, e.envelopeId as string, cause);
    case 'SequenceGapError':
      return new SequenceGapError(unscoped, e.seq as number, e.expected as number, cause);
    case 'StaleFenceError':
      return new StaleFenceError(unscoped, e.fence as number, e.current as number, cause);
    case 'FenceNotGrantedError':
      return new FenceNotGrantedError(unscoped, e.fence as number, e.current as number, cause);
    case 'ExecutionTerminatedError':
      return new ExecutionTerminatedError(unscoped, e.status as string, cause);
    case 'StorageWriteError': {
      // Keep a refusal inside recognisable (isSupersededRefusal): re-raise its cause too.
      const inner = rescope(e.cause, scoped, unscoped);
      return new StorageWriteError(unscoped, { cause: inner === e.cause ? error : inner });
    }
    default:
      // Any other error about this execution: a store failure, naming the unscoped id.
      return new StorageWriteError(unscoped, cause);
  }
}
