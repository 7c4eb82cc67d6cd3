/**
 * Tenancy over a whole set of stores: the event log through {@link TenantScopedEventStore},
 * and snapshots, timers and leases keyed under the same `<tenant>/` prefix, so a tenant's
 * runtime can neither read another tenant's snapshot nor take its leases or timers.
 */

import { TenantScopeError } from './errors.js';
import type {
  Blockage,
  BlockageFailure,
  BlockageStore,
  Lease,
  LeaseStore,
  PendingSignalsQuery,
  SendSignalOptions,
  Signal,
  SignalSendOutcome,
  SignalStore,
  Snapshot,
  SnapshotStore,
  Stores,
  Timer,
  TimerStore,
} from './spi.js';
import { TENANT_SCOPE, type TenantScoped, tenantPrefix } from './tenancy.js';
import { TenantScopedEventStore } from './tenant-scoped-event-store.js';

export { TenantScopeError };

/** Snapshots of one tenant: stored under the scoped execution id. */
export class TenantScopedSnapshotStore implements SnapshotStore, TenantScoped {
  private readonly prefix: string;
  readonly [TENANT_SCOPE]: string;

  constructor(
    private readonly inner: SnapshotStore,
    tenant: string,
  ) {
    this.prefix = tenantPrefix(tenant, 'TenantScopedSnapshotStore');
    this[TENANT_SCOPE] = tenant;
  }

  put(snapshot: Snapshot): Promise<void> {
    return this.inner.put({ ...snapshot, executionId: this.prefix + snapshot.executionId });
  }

  async latest(executionId: string): Promise<Snapshot | null> {
    const found = await this.inner.latest(this.prefix + executionId);
    return found === null ? null : { ...found, executionId };
  }

  delete(executionId: string): Promise<void> {
    return this.inner.delete(this.prefix + executionId);
  }
}

/** Leases of one tenant: keys are stored under the tenant's prefix; others' are invisible. */
export class TenantScopedLeaseStore implements LeaseStore, TenantScoped {
  private readonly prefix: string;
  readonly [TENANT_SCOPE]: string;

  /** The inner store's `claimMany` over the tenant's keys; absent when the inner store has none. */
  readonly claimMany?: LeaseStore['claimMany'];
  /** The inner store's `releaseMany` over the tenant's keys; absent when the inner store has none. */
  readonly releaseMany?: LeaseStore['releaseMany'];

  constructor(
    private readonly inner: LeaseStore,
    tenant: string,
  ) {
    this.prefix = tenantPrefix(tenant, 'TenantScopedLeaseStore');
    this[TENANT_SCOPE] = tenant;
    const claimMany = inner.claimMany?.bind(inner);
    if (claimMany !== undefined)
      this.claimMany = async (keys, owner, ttlMs, now) =>
        this.unscopeKeys(await claimMany(this.scopeKeys(keys), owner, ttlMs, now));
    const releaseMany = inner.releaseMany?.bind(inner);
    if (releaseMany !== undefined)
      this.releaseMany = async (keys, owner) =>
        this.unscopeKeys(await releaseMany(this.scopeKeys(keys), owner));
  }

  private scopeKeys(keys: readonly string[]): string[] {
    return keys.map((key) => this.prefix + key);
  }

  private unscopeKeys(keys: readonly string[]): string[] {
    return keys.map((key) => key.slice(this.prefix.length));
  }

  async claim(key: string, owner: string, ttlMs: number, now: number): Promise<Lease | null> {
    return this.unscope(await this.inner.claim(this.prefix + key, owner, ttlMs, now));
  }

  async renew(key: string, owner: string, ttlMs: number, now: number): Promise<Lease | null> {
    return this.unscope(await this.inner.renew(this.prefix + key, owner, ttlMs, now));
  }

  release(key: string, owner: string): Promise<boolean> {
    return this.inner.release(this.prefix + key, owner);
  }

  async get(key: string): Promise<Lease | null> {
    return this.unscope(await this.inner.get(this.prefix + key));
  }

  /** Expired leases of this tenant only (others' are read past and left alone). */
  async listExpired(now: number, limit: number): Promise<Lease[]> {
    const all = await this.inner.listExpired(now, Number.MAX_SAFE_INTEGER);
    return all
      .filter((lease) => lease.key.startsWith(this.prefix))
      .slice(0, limit)
      .map((lease) => ({ ...lease, key: lease.key.slice(this.prefix.length) }));
  }

  private unscope(lease: Lease | null): Lease | null {
    return lease === null ? null : { ...lease, key: lease.key.slice(this.prefix.length) };
  }
}

/**
 * Timers of one tenant: stored with the scoped execution id, so `forExecution` sees only the
 * tenant's own. Timer ids are random ULIDs, so claiming or completing one by id passes
 * through. `claimDue` over all due timers belongs to a supervisor on the unscoped stores
 * (one for every tenant): a tenant's wrapper refuses it rather than claim other tenants' timers.
 */
export class TenantScopedTimerStore implements TimerStore, TenantScoped {
  private readonly prefix: string;
  readonly [TENANT_SCOPE]: string;

  constructor(
    private readonly inner: TimerStore,
    readonly tenant: string,
  ) {
    this.prefix = tenantPrefix(tenant, 'TenantScopedTimerStore');
    this[TENANT_SCOPE] = tenant;
  }

  schedule(timer: Timer): Promise<void> {
    return this.inner.schedule({ ...timer, executionId: this.prefix + timer.executionId });
  }

  async claimDue(): Promise<Timer[]> {
    throw new TenantScopeError(
      this.tenant,
      "claimDue: run the supervisor over the unscoped stores; a tenant may not claim other tenants' timers",
    );
  }

  claim(timerId: string, options: Parameters<TimerStore['claim']>[1]): Promise<boolean> {
    return this.inner.claim(timerId, options);
  }

  complete(timerId: string): Promise<void> {
    return this.inner.complete(timerId);
  }

  async forExecution(executionId: string): Promise<Timer[]> {
    const timers = await this.inner.forExecution(this.prefix + executionId);
    return timers.map((timer) => ({ ...timer, executionId }));
  }

  nextDueAt(): Promise<number | null> {
    return this.inner.nextDueAt();
  }
}

/**
 * The signal inbox of one tenant: signals are kept under the scoped execution id, and signal
 * ids are scoped to their execution, so one tenant can neither see nor complete another's.
 */
export class TenantScopedSignalStore implements SignalStore, TenantScoped {
  private readonly prefix: string;
  readonly [TENANT_SCOPE]: string;

  constructor(
    private readonly inner: SignalStore,
    tenant: string,
  ) {
    this.prefix = tenantPrefix(tenant, 'TenantScopedSignalStore');
    this[TENANT_SCOPE] = tenant;
  }

  send(signal: Signal, options?: SendSignalOptions): Promise<SignalSendOutcome> {
    return this.inner.send({ ...signal, executionId: this.prefix + signal.executionId }, options);
  }

  async pending(executionId: string, query?: PendingSignalsQuery): Promise<Signal[]> {
    const signals = await this.inner.pending(this.prefix + executionId, query);
    return signals.map((signal) => ({ ...signal, executionId }));
  }

  complete(executionId: string, signalId: string): Promise<void> {
    return this.inner.complete(this.prefix + executionId, signalId);
  }

  clear(executionId: string): Promise<void> {
    return this.inner.clear(this.prefix + executionId);
  }
}

/** Blockages of one tenant: rows are kept under the scoped execution id; a listing sees the tenant's only. */
export class TenantScopedBlockageStore implements BlockageStore, TenantScoped {
  private readonly prefix: string;
  readonly [TENANT_SCOPE]: string;

  constructor(
    private readonly inner: BlockageStore,
    tenant: string,
  ) {
    this.prefix = tenantPrefix(tenant, 'TenantScopedBlockageStore');
    this[TENANT_SCOPE] = tenant;
  }

  async record(failure: BlockageFailure): Promise<Blockage> {
    return this.unscope(
      await this.inner.record({ ...failure, executionId: this.prefix + failure.executionId }),
    );
  }

  async get(executionId: string): Promise<Blockage | null> {
    const row = await this.inner.get(this.prefix + executionId);
    return row === null ? null : this.unscope(row);
  }

  async list(query: { after?: string; limit: number }): Promise<Blockage[]> {
    // Ids are ordered by code point, so the tenant's rows are the run that starts with its prefix.
    const rows = await this.inner.list({ after: this.prefix + (query.after ?? ''), limit: query.limit });
    return rows.filter((row) => row.executionId.startsWith(this.prefix)).map((row) => this.unscope(row));
  }

  clear(executionId: string): Promise<void> {
    return this.inner.clear(this.prefix + executionId);
  }

  private unscope(row: Blockage): Blockage {
    return { ...row, executionId: row.executionId.slice(this.prefix.length) };
  }
}

/**
 * Every store of `stores` scoped to one tenant.
 * @example
 * const runtime = createRuntime({ stores: tenantScopedStores(stores, 'acme'), workflows: [order] });
 */
export function tenantScopedStores(stores: Stores, tenant: string): Stores {
  return {
    events: new TenantScopedEventStore(stores.events, tenant),
    snapshots: new TenantScopedSnapshotStore(stores.snapshots, tenant),
    timers: new TenantScopedTimerStore(stores.timers, tenant),
    leases: new TenantScopedLeaseStore(stores.leases, tenant),
    signals: new TenantScopedSignalStore(stores.signals, tenant),
    ...(stores.blockages === undefined
      ? {}
      : { blockages: new TenantScopedBlockageStore(stores.blockages, tenant) }),
    ...(stores.beforeClose === undefined ? {} : { beforeClose: stores.beforeClose.bind(stores) }),
    close: () => stores.close(),
  };
}
