/**
 * Resumptions of queue executions (docs/queues.md, adr/0056). A suspended execution of a queue
 * holds no slot; when it is due to resume (a timer fell due, a signal or child it waits for
 * arrived) it goes back to its queue, and the node that next admits it resumes it there, within
 * the limits. Only the holder of its live slot resumes it.
 */
import type { Codec } from '../codec.js';
import { isTerminalStatus } from '../events.js';
import type { ExecutionState } from '../fold.js';
import { hasUnconsumed } from '../signal-wait.js';
import type { Stores } from '../spi.js';
import type { QueueItem } from './queue-spi.js';

/** What a runtime's runs of queue executions need. */
export interface QueuedResumeDeps {
  stores: Pick<Stores, 'queues'>;
  /** Encodes the input of an item written back from seq 0 ({@link holdsSlot}). */
  codec: Pick<Codec, 'encode'>;
  /** The runtime's lease owner: the owner of the slots its supervisor claims. */
  owner: string;
  clock(): number;
}

/** Where an execution waits in its queue, as seq 0 records it (`StartedPayload.queue`). */
export interface QueuePlace {
  queue: string;
  /** Absent: the shared partition (`''`). */
  partitionKey?: string;
  /** Absent: 0. */
  priority?: number;
}

/** The place of `state` in its queue, or undefined for an execution in no queue. */
export function placeOf(
  state: Pick<ExecutionState, 'queue' | 'partitionKey' | 'priority'>,
): QueuePlace | undefined {
  if (state.queue === undefined) return undefined;
  const place: QueuePlace = { queue: state.queue };
  if (state.partitionKey !== undefined) place.partitionKey = state.partitionKey;
  if (state.priority !== undefined) place.priority = state.priority;
  return place;
}

/**
 * Before a run of `state` here (a resume, a takeover, a first run): true when this runtime may
 * run it. An execution in no queue (seq 0 names none) runs anywhere. One of a queue runs only
 * where its live slot is held: otherwise it is left to its queue, which admits it within the
 * limits. On the way, a suspended item is queued again (`QueueStore.requeue`), and an item
 * that is gone (a resume of an ended execution, a crash between a successor's seq 0 and its
 * item) is written back from seq 0, queued in its old place.
 */
export async function holdsSlot(deps: QueuedResumeDeps, state: ExecutionState): Promise<boolean> {
  const queues = deps.stores.queues;
  if (state.queue === undefined || queues === undefined) return true;
  const now = deps.clock();
  const entry = await queues.requeue(state.executionId, now);
  if (entry === null) {
    await queues.enqueue(itemOf(deps, state, now));
    return false;
  }
  return entry.state === 'running' && entry.owner === deps.owner && (entry.expiresAt ?? 0) > now;
}

/** The queue item of `state` (an execution of a queue), claimable from `now`. */
export function itemOf(deps: Pick<QueuedResumeDeps, 'codec'>, state: ExecutionState, now: number): QueueItem {
  return {
    executionId: state.executionId,
    queue: state.queue ?? '',
    partitionKey: state.partitionKey ?? '',
    priority: state.priority ?? 0,
    workflow: state.workflow,
    version: state.version,
    input: deps.codec.encode(state.input),
    enqueuedAt: state.startedAt,
    availableAt: now,
  };
}

/**
 * For a process that holds no slot (a client): true when `state` belongs to a queue, whose
 * suspended item is queued again (`QueueStore.requeue`; a queued or running one is left as it
 * is), so the node the queue admits it to resumes it. False when it is in no queue (or the
 * stores keep no queues): the caller hands it over as any other execution.
 */
export async function requeueSuspended(
  stores: Pick<Stores, 'queues'>,
  state: Pick<ExecutionState, 'executionId' | 'queue'>,
  now: number,
): Promise<boolean> {
  if (stores.queues === undefined || state.queue === undefined) return false;
  return (await stores.queues.requeue(state.executionId, now)) !== null;
}

/**
 * A run of a queue execution suspended here: give its slot back before anything can resume it
 * (suspended executions hold none). A no-op for an execution in no queue (no statement) and for
 * one whose slot `owner` does not hold.
 */
export async function releaseSuspendedSlot(deps: QueuedResumeDeps, state: ExecutionState): Promise<void> {
  if (state.queue === undefined || deps.stores.queues === undefined) return;
  await deps.stores.queues.release(state.executionId, deps.owner, { state: 'suspended' });
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
