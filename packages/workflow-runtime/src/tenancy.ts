/**
 * The rules of tenancy the runtime enforces (adr/0024). A tenant's ids are stored as
 * `<tenant>/<id>`, and every store a tenant's runtime uses must be scoped to that tenant: an
 * event store scoped alone leaves snapshots, timers, leases and signals keyed by the bare id,
 * shared with every other tenant. So a runtime refuses stores scoped in part, or to several
 * tenants; and the separator is reserved: a runtime on unscoped stores does not create an id
 * with `/` in it (it would appear inside that tenant), except a child in its parent's tenant.
 */
import { InvalidInputError, TenantScopeError } from './errors.js';
import { illFormedReason } from './ids.js';
import type { EventStore, Stores } from './spi.js';

/** Separates a tenant from the id of one of its executions in the stores. */
export const TENANT_SEPARATOR = '/';

/**
 * The property naming the tenant a store is scoped to. Every tenant-scoped store has it; a
 * wrapper around one should carry the inner store's, or the runtime takes it for unscoped.
 */
export const TENANT_SCOPE: unique symbol = Symbol.for('@skein/workflow-runtime.tenant');

/** A store scoped to one tenant. */
export interface TenantScoped {
  readonly [TENANT_SCOPE]: string;
}

/** The tenant `store` is scoped to, or undefined when it is not scoped. */
export function tenantOf(store: object): string | undefined {
  const tenant = (store as Partial<TenantScoped>)[TENANT_SCOPE];
  return typeof tenant === 'string' ? tenant : undefined;
}

/**
 * The prefix `<tenant>/` of a tenant's ids, or `InvalidInputError` (at `where`) for a name
 * that is empty, holds the separator, or is not well-formed Unicode (two such names could be
 * stored as one, and share their executions).
 */
export function tenantPrefix(tenant: string, where: string): string {
  const problem =
    typeof tenant !== 'string' || tenant.length === 0 || tenant.includes(TENANT_SEPARATOR)
      ? `must be a non-empty string without "${TENANT_SEPARATOR}", got ${JSON.stringify(tenant)}`
      : illFormedReason(tenant);
  if (problem !== undefined) throw new InvalidInputError(where, [{ path: 'tenant', message: problem }]);
  return `${tenant}${TENANT_SEPARATOR}`;
}

const STORE_NAMES = ['events', 'snapshots', 'timers', 'leases', 'signals'] as const;

/**
 * The one tenant every store of `stores` is scoped to, or undefined when none is scoped.
 * Throws `TenantScopeError` when some are scoped and others are not, or to other tenants.
 */
export function storesTenant(stores: Stores): string | undefined {
  // The blockage store is optional; when there is one, it must be scoped as the others are.
  const names = stores.blockages === undefined ? STORE_NAMES : [...STORE_NAMES, 'blockages' as const];
  const tenants = names.map((name) => tenantOf(stores[name]!));
  const first = tenants.find((tenant) => tenant !== undefined);
  if (tenants.every((tenant) => tenant === first)) return first;
  const scopes = names.map(
    (name, i) => `${name} ${tenants[i] === undefined ? 'unscoped' : `"${tenants[i]}"`}`,
  );
  throw new TenantScopeError(
    first!,
    `the stores must all be scoped to one tenant, or none (${scopes.join(', ')}): a store left ` +
      `unscoped is shared with every other tenant; use tenantScopedStores(stores, "${first}")`,
  );
}

/** The tenant part of a stored id (`acme` of `acme/order-1`), or undefined when it has none. */
function tenantPart(executionId: string): string | undefined {
  const at = executionId.indexOf(TENANT_SEPARATOR);
  return at <= 0 ? undefined : executionId.slice(0, at);
}

/**
 * True when a runtime on unscoped stores that starts `executionId` (as `parentId`'s child,
 * when given) would cross a tenant's boundary: an id in a tenant outside a child of that
 * tenant, or a tenant's child outside it. No read; then {@link assertUnscopedMayCreate}.
 */
export function crossesTenant(executionId: string, parentId?: string): boolean {
  return tenantPart(executionId) !== (parentId === undefined ? undefined : tenantPart(parentId));
}

/**
 * Throw `InvalidInputError` unless a runtime on unscoped stores may write seq 0 of
 * `executionId`, which {@link crossesTenant}: only when it exists already (then it is not
 * created here: the append finds it taken, as any start of an existing id does).
 */
export async function assertUnscopedMayCreate(
  events: EventStore,
  executionId: string,
  parentId?: string,
): Promise<void> {
  if ((await events.getExecution(executionId)) !== null) return;
  const parentTenant = parentId === undefined ? undefined : tenantPart(parentId);
  const tenant = tenantPart(executionId);
  const message =
    parentTenant === undefined
      ? `must not hold "${TENANT_SEPARATOR}" here: ids "${tenant}${TENANT_SEPARATOR}…" belong to tenant "${tenant}"; start it on tenantScopedStores(stores, "${tenant}")`
      : `must be in the parent's tenant "${parentTenant}" ("${parentTenant}${TENANT_SEPARATOR}…"): a child of a tenant's execution stays in that tenant`;
  throw new InvalidInputError(`start of execution "${executionId}"`, [{ path: 'executionId', message }]);
}
