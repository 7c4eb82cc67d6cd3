/** {@link QueueStore} in memory: limits hold within one process (one store object). */
import { compareQueueItems, planClaims } from '../queues/claim-plan.js';
import type {
  ClaimQueueOptions,
  QueueEnqueueResult,
  QueueEntry,
  QueueItem,
  QueueStore,
} from '../queues/queue-spi.js';

/** Queue items and slots in a map; every operation runs in one turn, so claims are atomic. */
export class MemoryQueueStore implements QueueStore {
  private readonly items = new Map<string, QueueEntry>();
  /** Slot hand-out times per queue, for rate limits (pruned to the window on each claim). */
  private readonly starts = new Map<string, number[]>();
  private readonly cursors = new Map<string, string | null>();

  async enqueue(item: QueueItem): Promise<QueueEnqueueResult> {
    const existing = this.items.get(item.executionId);
    if (existing !== undefined) return { executionId: existing.executionId, created: false };
    if (item.deduplicationId !== undefined) {
      for (const other of this.items.values())
        if (other.queue === item.queue && other.deduplicationId === item.deduplicationId)
          return { executionId: other.executionId, created: false };
    }
    this.items.set(item.executionId, { ...item, state: 'queued' });
    return { executionId: item.executionId, created: true };
  }

  async claim(options: ClaimQueueOptions): Promise<QueueItem[]> {
    const { queue, owner, now, limits } = options;
    const candidates: QueueItem[] = [];
    const byPartition = new Map<string, number>();
    let total = 0;
    let mine = 0;
    for (const entry of this.items.values()) {
      if (entry.queue !== queue) continue;
      const live = entry.state === 'running' && entry.expiresAt! > now;
      if (live) {
        total += 1;
        if (entry.owner === owner) mine += 1;
        byPartition.set(entry.partitionKey, (byPartition.get(entry.partitionKey) ?? 0) + 1);
      } else if (entry.state === 'running' || (entry.state === 'queued' && entry.availableAt <= now)) {
        candidates.push(toItem(entry));
      }
    }
    candidates.sort((a, b) => compareQueueItems(a, b, options.priority));
    const window = this.window(queue, now, limits.rateLimit?.periodMs);
    const plan = planClaims({
      candidates,
      live: { total, owner: mine, byPartition, inWindow: window.length },
      limits,
      max: options.max,
      cursor: this.cursors.get(queue) ?? null,
      priority: options.priority,
    });
    for (const item of plan.chosen) {
      const entry = this.items.get(item.executionId)!;
      entry.state = 'running';
      entry.owner = owner;
      entry.expiresAt = now + options.ttlMs;
      if (limits.rateLimit !== undefined) window.push(now);
    }
    this.cursors.set(queue, plan.cursor);
    return plan.chosen;
  }

  async renew(owner: string, executionIds: readonly string[], ttlMs: number, now: number): Promise<string[]> {
    const renewed: string[] = [];
    for (const id of executionIds) {
      const entry = this.items.get(id);
      if (entry?.state !== 'running' || entry.owner !== owner || entry.expiresAt! <= now) continue;
      entry.expiresAt = now + ttlMs;
      renewed.push(id);
    }
    return renewed;
  }

  async release(
    executionId: string,
    owner: string,
    to: { state: 'suspended' } | { state: 'queued'; availableAt: number },
  ): Promise<boolean> {
    const entry = this.items.get(executionId);
    if (entry?.state !== 'running' || entry.owner !== owner) return false;
    entry.state = to.state;
    if (to.state === 'queued') entry.availableAt = to.availableAt;
    delete entry.owner;
    delete entry.expiresAt;
    return true;
  }

  async requeue(executionId: string, availableAt: number): Promise<QueueEntry | null> {
    const entry = this.items.get(executionId);
    if (entry === undefined) return null;
    if (entry.state === 'suspended') {
      entry.state = 'queued';
      entry.availableAt = availableAt;
    }
    return { ...entry };
  }

  async finish(executionId: string): Promise<void> {
    this.items.delete(executionId);
  }

  async admitting(executionIds: readonly string[]): Promise<string[]> {
    return executionIds.filter((id) => {
      const state = this.items.get(id)?.state;
      return state === 'queued' || state === 'running';
    });
  }

  async get(executionId: string): Promise<QueueEntry | null> {
    const entry = this.items.get(executionId);
    return entry === undefined ? null : { ...entry };
  }

  /** The queue's hand-out times inside the window ending at `now` (kept pruned). */
  private window(queue: string, now: number, periodMs: number | undefined): number[] {
    const kept =
      periodMs === undefined ? [] : (this.starts.get(queue) ?? []).filter((at) => at > now - periodMs);
    this.starts.set(queue, kept);
    return kept;
  }
}

function toItem(entry: QueueEntry): QueueItem {
  const { state: _state, owner: _owner, expiresAt: _expiresAt, ...item } = entry;
  return item;
}
