/**
 * Which claimable items a claim admits, given what holds slots now: the one algorithm every
 * queue store runs inside its atomic claim, so the limits and the fairness are the same on
 * every store (docs/queues.md#fairness).
 *
 * Free slots are the least of the claimer's `max`, the queue's `concurrency` minus its live
 * slots, `workerConcurrency` minus the claimer's own, and the rate limit minus the slots handed
 * out in the current window. They go to partitions round-robin: after the partition served last
 * (`cursor`), in key order, wrapping; a partition at its `partitionConcurrency` is passed over.
 * With `priority`, the best (lowest) priority among the partitions' next items goes first, and
 * the round-robin breaks ties, so one busy partition can never starve another.
 */
import type { QueueItem, QueueLimits } from './queue-spi.js';

/** What holds slots in the queue at the time of the claim. */
export interface LiveSlots {
  /** Live slots in the queue. */
  total: number;
  /** Live slots of the claiming owner. */
  owner: number;
  /** Live slots per partition key (absent: none). */
  byPartition: ReadonlyMap<string, number>;
  /** Slots handed out in the rate window ending now (0 without a rate limit). */
  inWindow: number;
}

/** Input of {@link planClaims}. */
export interface ClaimPlanInput {
  /** Claimable items; each partition's in its serving order (see {@link compareQueueItems}). */
  candidates: readonly QueueItem[];
  live: LiveSlots;
  limits: QueueLimits;
  max: number;
  /** The partition served last, or null. */
  cursor: string | null;
  priority: boolean;
}

/** What {@link planClaims} decided. */
export interface ClaimPlan {
  /** The items to give slots to, in the order they were chosen. */
  chosen: QueueItem[];
  /** The partition served last after this claim (store it for the next claim). */
  cursor: string | null;
}

/** Serving order within a partition: priority (when on), then enqueue time, then id. */
export function compareQueueItems(a: QueueItem, b: QueueItem, priority: boolean): number {
  if (priority && a.priority !== b.priority) return a.priority - b.priority;
  if (a.enqueuedAt !== b.enqueuedAt) return a.enqueuedAt - b.enqueuedAt;
  return a.executionId < b.executionId ? -1 : a.executionId > b.executionId ? 1 : 0;
}

/** Free slots before partitions are considered. */
export function freeSlots(live: LiveSlots, limits: QueueLimits, max: number): number {
  let free = max;
  if (limits.concurrency !== undefined) free = Math.min(free, limits.concurrency - live.total);
  if (limits.workerConcurrency !== undefined) free = Math.min(free, limits.workerConcurrency - live.owner);
  if (limits.rateLimit !== undefined) free = Math.min(free, limits.rateLimit.limit - live.inWindow);
  return Math.max(0, free);
}

/** Choose the items a claim admits; see the module comment. */
export function planClaims(input: ClaimPlanInput): ClaimPlan {
  let free = freeSlots(input.live, input.limits, input.max);
  const queues = byPartition(input.candidates);
  const keys = [...queues.keys()].sort();
  const taken = new Map<string, number>();
  const chosen: QueueItem[] = [];
  let cursor = input.cursor;
  while (free > 0) {
    const next = pickPartition(keys, queues, taken, input, cursor);
    if (next === undefined) break;
    const item = queues.get(next)!.shift()!;
    chosen.push(item);
    taken.set(next, (taken.get(next) ?? 0) + 1);
    cursor = next;
    free -= 1;
  }
  return { chosen, cursor };
}

function byPartition(candidates: readonly QueueItem[]): Map<string, QueueItem[]> {
  const queues = new Map<string, QueueItem[]>();
  for (const item of candidates) {
    const list = queues.get(item.partitionKey);
    if (list === undefined) queues.set(item.partitionKey, [item]);
    else list.push(item);
  }
  return queues;
}

/**
 * The partition served next: of those with an item left and room under `partitionConcurrency`,
 * the best next priority (with `priority`), the first after `cursor` in key order among equals.
 */
function pickPartition(
  keys: readonly string[],
  queues: ReadonlyMap<string, QueueItem[]>,
  taken: ReadonlyMap<string, number>,
  input: ClaimPlanInput,
  cursor: string | null,
): string | undefined {
  const start = cursor === null ? 0 : firstAfter(keys, cursor);
  const limit = input.limits.partitionConcurrency;
  let best: string | undefined;
  let bestPriority = Number.POSITIVE_INFINITY;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[(start + i) % keys.length]!;
    const head = queues.get(key)?.[0];
    if (head === undefined) continue;
    const holding = (input.live.byPartition.get(key) ?? 0) + (taken.get(key) ?? 0);
    if (limit !== undefined && holding >= limit) continue;
    if (!input.priority) return key;
    if (head.priority < bestPriority) {
      best = key;
      bestPriority = head.priority;
    }
  }
  return best;
}

/** Index of the first key greater than `cursor` (0 when none is: the rotation wraps). */
function firstAfter(keys: readonly string[], cursor: string): number {
  const at = keys.findIndex((key) => key > cursor);
  return Math.max(at, 0);
}
