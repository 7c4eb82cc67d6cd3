/**
 * The queue store SPI: durable queue items and the slots that admit them
 * (docs/queues.md). A slot is a lease held on one item: while it is live it counts against the
 * queue's limits; when its holder stops renewing it, the slot lapses and the item is claimable
 * again. Time always comes from the caller (`now`), so tests inject a clock.
 */

/** Where an item is: waiting for a slot, holding one, or suspended (holding none). */
export type QueueItemState = 'queued' | 'running' | 'suspended';

/** One execution waiting in (or admitted by) a queue. */
export interface QueueItem {
  executionId: string;
  queue: string;
  /** The partition it counts against (`''` when the caller gave no `partitionKey`). */
  partitionKey: string;
  /** Lower is served first (default 0). */
  priority: number;
  /** Workflow name and version to start it with, should its seq 0 not exist yet. */
  workflow: string;
  version: number;
  /** The codec's encoding of the input. */
  input: string;
  /** Milliseconds since the epoch when it was enqueued (ties in priority go first-enqueued first). */
  enqueuedAt: number;
  /** Not claimable before this time (`delayMs`). */
  availableAt: number;
  /** Set when the caller passed one: unique in the queue while the item exists. */
  deduplicationId?: string;
}

/** An item and its slot, as {@link QueueStore.get} reports it. */
export interface QueueEntry extends QueueItem {
  state: QueueItemState;
  /** Holder of the slot (state `running`). */
  owner?: string;
  /** When the slot lapses unless renewed (state `running`). */
  expiresAt?: number;
}

/** What {@link QueueStore.enqueue} did. */
export interface QueueEnqueueResult {
  /** The execution the caller should follow: the new item's, or the first one's on a duplicate. */
  executionId: string;
  /** False when an item with this execution id, or this `deduplicationId` in the queue, exists. */
  created: boolean;
}

/** The limits a claim must keep; each one absent means no limit of that kind. */
export interface QueueLimits {
  /** Live slots in the whole queue, across every process. */
  concurrency?: number;
  /** Live slots the claiming owner holds in this queue. */
  workerConcurrency?: number;
  /** Live slots per partition key. */
  partitionConcurrency?: number;
  /** Slots handed out in any window of `periodMs`, across every process. */
  rateLimit?: { limit: number; periodMs: number };
}

/** Options of {@link QueueStore.claim}. */
export interface ClaimQueueOptions {
  queue: string;
  owner: string;
  now: number;
  /** The slot lapses this long after `now` unless renewed. */
  ttlMs: number;
  /** At most this many items (the claimer's free capacity), an integer >= 1. */
  max: number;
  limits: QueueLimits;
  /** Serve lower `priority` first (otherwise priorities are ignored). */
  priority: boolean;
}

/**
 * Queue items and their slots. `claim` is atomic against every other claim of the same queue,
 * in every process sharing the store: the limits it checks and the slots it takes are one step.
 */
export interface QueueStore {
  /**
   * Add an item unless one with its execution id exists, or one with its `deduplicationId`
   * exists in its queue; says which execution the caller should follow.
   */
  enqueue(item: QueueItem): Promise<QueueEnqueueResult>;
  /**
   * Give slots to claimable items (queued and available, or holding a lapsed slot) within the
   * limits: lower priority first when `priority`, partitions served round-robin, each
   * partition first-enqueued first. Returns the items now held by `owner`.
   */
  claim(options: ClaimQueueOptions): Promise<QueueItem[]>;
  /** Extend slots `owner` holds and that have not lapsed; returns the ids renewed. */
  renew(owner: string, executionIds: readonly string[], ttlMs: number, now: number): Promise<string[]>;
  /**
   * Give a slot back: the item becomes `suspended` (it holds no slot until something resumes
   * it) or `queued` again at `availableAt`. False when `owner` did not hold it.
   */
  release(
    executionId: string,
    owner: string,
    to: { state: 'suspended' } | { state: 'queued'; availableAt: number },
  ): Promise<boolean>;
  /**
   * The suspended execution is due to resume (a timer fell due, a signal or child it waits for
   * arrived): a `suspended` item becomes `queued`, claimable from `availableAt`, so the resumed
   * run waits for a slot like a new one. Returns the item after the call (`queued` when it was
   * suspended; a queued or running item is left as it is), or null when the execution has none.
   */
  requeue(executionId: string, availableAt: number): Promise<QueueEntry | null>;
  /** The execution ended: delete its item (its `deduplicationId` is free again). */
  finish(executionId: string): Promise<void>;
  /** Of `executionIds`, those whose item is `queued` or `running`: the queue admits and recovers them. */
  admitting(executionIds: readonly string[]): Promise<string[]>;
  /** One item and its slot, or null. */
  get(executionId: string): Promise<QueueEntry | null>;
}
