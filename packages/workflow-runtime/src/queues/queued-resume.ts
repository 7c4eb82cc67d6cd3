/**
 * Resumptions of queue executions (docs/queues.md, adr/0056). A suspended execution of a queue
 * holds no slot; when it is due to resume (a timer fell due, a signal or child it waits for
 * arrived) it goes back to its queue, and the node that next admits it resumes it there, within
 * the limits. Only the holder of its live slot resumes it.
 */
import { isTerminalStatus } from '../events.js';
import type { ExecutionState } from '../fold.js';
import { hasUnconsumed } from '../signal-wait.js';
import type { Stores } from '../spi.js';

/** What a runtime's resumptions of queue executions need. */
export interface QueuedResumeDeps {
  stores: Pick<Stores, 'queues'>;
  /** True when the runtime registers queues (a runtime without them resumes as before). */
  queued: boolean;
  /** The runtime's lease owner: the owner of the slots its supervisor claims. */
  owner: string;
  clock(): number;
}

/**
 * Before resuming `executionId` here: true when it must wait for a slot instead, because it
 * belongs to a queue and this runtime does not hold its live slot. A suspended item is queued
 * again on the way (`QueueStore.requeue`), so the queue admits it when its limits allow.
 */
export async function waitsForSlot(deps: QueuedResumeDeps, executionId: string): Promise<boolean> {
  if (!deps.queued || deps.stores.queues === undefined) return false;
  const now = deps.clock();
  const entry = await deps.stores.queues.requeue(executionId, now);
  if (entry === null) return false;
  const held = entry.state === 'running' && entry.owner === deps.owner && (entry.expiresAt ?? 0) > now;
  return !held;
}

/**
 * For a process that holds no slot (a client): true when `executionId` belongs to a queue, whose
 * suspended item is queued again (`QueueStore.requeue`; a queued or running one is left as it
 * is), so the node the queue admits it to resumes it. False when it has no item (or the stores
 * keep no queues): the caller hands it over as any other execution.
 */
export async function requeueSuspended(
  stores: Pick<Stores, 'queues'>,
  executionId: string,
  now: number,
): Promise<boolean> {
  if (stores.queues === undefined) return false;
  return (await stores.queues.requeue(executionId, now)) !== null;
}

/**
 * A run of a queue execution suspended here: give its slot back before anything can resume it
 * (suspended executions hold none). A no-op for an execution without a slot held by `owner`.
 */
export async function releaseSuspendedSlot(deps: QueuedResumeDeps, executionId: string): Promise<void> {
  if (!deps.queued || deps.stores.queues === undefined) return;
  await deps.stores.queues.release(executionId, deps.owner, { state: 'suspended' });
}

/**
 * True when what the suspended `state` waits for is there: a signal it waits for is in its
 * inbox (and not consumed yet), or a child it waits for has ended.
 */
export async function arrived(
  stores: Pick<Stores, 'events' | 'signals'>,
  state: ExecutionState,
): Promise<boolean> {
  const awaiting = state.awaiting;
  if (awaiting === undefined) return false;
  if (
    awaiting.signals.length > 0 &&
    (await hasUnconsumed(stores.signals, state.executionId, awaiting.signals, state.consumedSignals))
  )
    return true;
  const children = await Promise.all(awaiting.children.map((id) => stores.events.getExecution(id)));
  return children.some((child) => child !== null && isTerminalStatus(child.status));
}
