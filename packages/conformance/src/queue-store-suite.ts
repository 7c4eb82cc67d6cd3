/**
 * `queueStoreSuite`: queue items, slots as leases, the limits a claim keeps (global, per owner,
 * per partition, rate), round-robin partitions, priority, deduplication, delays, suspension.
 * Time always comes from the caller.
 */
import type { QueueItem, QueueLimits, QueueStore } from '@skein/workflow-runtime/spi';
import { describe, expect, it } from 'vitest';
import { withStores } from './harness.js';

/** Options of {@link queueStoreSuite}. */
export interface QueueStoreSuiteOptions {
  /** Names the implementation in test titles. */
  name: string;
  /** Returns a fresh, empty queue store; each test closes what it opened. */
  open: () => QueueStoreUnderTest | Promise<QueueStoreUnderTest>;
}

/** The stores the suite needs: a queue store and `close`. */
export interface QueueStoreUnderTest {
  queues?: QueueStore;
  close(): void | Promise<void>;
}

function item(executionId: string, fields: Partial<QueueItem> = {}): QueueItem {
  return {
    executionId,
    queue: 'q',
    partitionKey: '',
    priority: 0,
    workflow: 'wf',
    version: 1,
    input: '{"n":1}',
    enqueuedAt: 0,
    availableAt: 0,
    ...fields,
  };
}

/** Enqueue `count` items `prefix-0` … with rising enqueue times. */
async function fill(queues: QueueStore, prefix: string, count: number, fields: Partial<QueueItem> = {}) {
  for (let i = 0; i < count; i++) await queues.enqueue(item(`${prefix}-${i}`, { enqueuedAt: i, ...fields }));
}

function claimOf(
  queues: QueueStore,
  owner: string,
  now: number,
  limits: QueueLimits,
  max = 100,
  priority = false,
) {
  return queues
    .claim({ queue: 'q', owner, now, ttlMs: 1_000, max, limits, priority })
    .then((items) => items.map((claimed) => claimed.executionId));
}

/**
 * Register the queue-store conformance tests in the current vitest file.
 * @example
 * queueStoreSuite({ name: 'memory', open: () => openMemoryStores() });
 */
export function queueStoreSuite({ name, open }: QueueStoreSuiteOptions): void {
  const withQueues = (body: (queues: QueueStore) => Promise<void>) =>
    withStores(open, async (stores) => {
      if (stores.queues === undefined) throw new Error(`${name}: the stores have no queue store`);
      await body(stores.queues);
    });

  describe(`${name}: queue store`, () => {
    it('enqueue keeps an item; the same execution id or deduplicationId returns the first', () =>
      withQueues(async (queues) => {
        expect(await queues.enqueue(item('a', { deduplicationId: 'd' }))).toEqual({
          executionId: 'a',
          created: true,
        });
        expect(await queues.get('a')).toMatchObject({ executionId: 'a', state: 'queued', input: '{"n":1}' });
        expect(await queues.enqueue(item('a'))).toEqual({ executionId: 'a', created: false });
        expect(await queues.enqueue(item('b', { deduplicationId: 'd' }))).toEqual({
          executionId: 'a',
          created: false,
        });
        expect(await queues.get('b')).toBeNull();
        expect(await queues.enqueue(item('c', { queue: 'other', deduplicationId: 'd' }))).toEqual({
          executionId: 'c',
          created: true,
        });
      }));

    it('deduplication holds only while the first is not finished', () =>
      withQueues(async (queues) => {
        await queues.enqueue(item('a', { deduplicationId: 'd' }));
        await queues.finish('a');
        expect(await queues.get('a')).toBeNull();
        expect(await queues.enqueue(item('b', { deduplicationId: 'd' }))).toEqual({
          executionId: 'b',
          created: true,
        });
      }));

    it('concurrency is a limit across owners; a lapsed slot comes back to the queue', () =>
      withQueues(async (queues) => {
        await fill(queues, 'i', 5);
        expect(await claimOf(queues, 'a', 0, { concurrency: 2 })).toEqual(['i-0', 'i-1']);
        expect(await claimOf(queues, 'b', 10, { concurrency: 2 })).toEqual([]);
        expect(await queues.get('i-0')).toMatchObject({ state: 'running', owner: 'a', expiresAt: 1_000 });
        // a died: at its slots' expiry the lapsed items are claimable again, first-enqueued first.
        expect(await claimOf(queues, 'b', 1_000, { concurrency: 2 })).toEqual(['i-0', 'i-1']);
        expect(await queues.get('i-0')).toMatchObject({ owner: 'b', expiresAt: 2_000 });
      }));

    it('of concurrent claims by many owners, the slots handed out never pass concurrency', () =>
      withQueues(async (queues) => {
        await fill(queues, 'i', 60);
        const owners = Array.from({ length: 8 }, (_, i) => `o${i}`);
        for (let round = 0; round < 10; round++) {
          const claims = await Promise.all(
            owners.map((owner) => claimOf(queues, owner, round, { concurrency: 3 })),
          );
          const all = claims.flat();
          expect(all).toHaveLength(3);
          expect(new Set(all).size).toBe(3);
          for (const id of all) await queues.finish(id);
        }
      }));

    it('workerConcurrency limits the slots of one owner', () =>
      withQueues(async (queues) => {
        await fill(queues, 'i', 5);
        const limits = { concurrency: 3, workerConcurrency: 1 };
        expect(await claimOf(queues, 'a', 0, limits)).toEqual(['i-0']);
        expect(await claimOf(queues, 'a', 0, limits)).toEqual([]);
        expect(await claimOf(queues, 'b', 0, limits)).toEqual(['i-1']);
        expect(await claimOf(queues, 'c', 0, { ...limits, workerConcurrency: 5 })).toEqual(['i-2']);
      }));

    it('max bounds one claim', () =>
      withQueues(async (queues) => {
        await fill(queues, 'i', 5);
        expect(await claimOf(queues, 'a', 0, {}, 2)).toEqual(['i-0', 'i-1']);
        expect(await claimOf(queues, 'a', 0, {}, 10)).toEqual(['i-2', 'i-3', 'i-4']);
      }));

    it('fairness: partitions share the slots round-robin; a busy key does not starve the others', () =>
      withQueues(async (queues) => {
        await fill(queues, 'busy', 10, { partitionKey: 'busy' });
        await queues.enqueue(item('x-0', { partitionKey: 'x', enqueuedAt: 50 }));
        await queues.enqueue(item('y-0', { partitionKey: 'y', enqueuedAt: 60 }));
        expect(await claimOf(queues, 'a', 0, { concurrency: 3 })).toEqual(['busy-0', 'x-0', 'y-0']);
      }));

    it('fairness: the rotation goes on from the partition served last, claim after claim', () =>
      withQueues(async (queues) => {
        await fill(queues, 'b', 4, { partitionKey: 'b' });
        await fill(queues, 'a', 4, { partitionKey: 'a', enqueuedAt: 100 });
        const served: string[] = [];
        for (let i = 0; i < 6; i++) {
          const [id] = await claimOf(queues, 'o', i, {}, 1);
          served.push(id!);
          await queues.finish(id!);
        }
        expect(served).toEqual(['a-0', 'b-0', 'a-1', 'b-1', 'a-2', 'b-2']);
      }));

    it('partition concurrency limits each key; other keys still get slots', () =>
      withQueues(async (queues) => {
        await fill(queues, 'p', 5, { partitionKey: 'p' });
        await fill(queues, 'r', 5, { partitionKey: 'r' });
        const limits = { concurrency: 10, partitionConcurrency: 2 };
        expect((await claimOf(queues, 'a', 0, limits)).sort()).toEqual(['p-0', 'p-1', 'r-0', 'r-1']);
        expect(await claimOf(queues, 'b', 0, limits)).toEqual([]);
        await queues.finish('p-0');
        expect(await claimOf(queues, 'b', 0, limits)).toEqual(['p-2']);
      }));

    it('priority: lower first when on, across partitions; enqueue order when off', () =>
      withQueues(async (queues) => {
        await queues.enqueue(item('late-urgent', { priority: 1, enqueuedAt: 9, partitionKey: 'z' }));
        await queues.enqueue(item('early-low', { priority: 5, enqueuedAt: 1, partitionKey: 'a' }));
        await queues.enqueue(item('mid', { priority: 3, enqueuedAt: 5, partitionKey: 'a' }));
        expect(await claimOf(queues, 'o', 0, {}, 3, true)).toEqual(['late-urgent', 'mid', 'early-low']);
      }));

    it('priority off: first-enqueued first, whatever the priorities', () =>
      withQueues(async (queues) => {
        await queues.enqueue(item('second', { priority: 1, enqueuedAt: 9 }));
        await queues.enqueue(item('first', { priority: 5, enqueuedAt: 1 }));
        expect(await claimOf(queues, 'o', 0, {}, 2, false)).toEqual(['first', 'second']);
      }));

    it('rate limit: at most limit slots in any window of periodMs, across owners', () =>
      withQueues(async (queues) => {
        await fill(queues, 'i', 10);
        const limits = { rateLimit: { limit: 2, periodMs: 1_000 } };
        expect(await claimOf(queues, 'a', 0, limits)).toHaveLength(2);
        await queues.finish('i-0');
        await queues.finish('i-1');
        expect(await claimOf(queues, 'b', 500, limits)).toEqual([]);
        expect(await claimOf(queues, 'b', 999, limits)).toEqual([]);
        expect(await claimOf(queues, 'b', 1_000, limits)).toEqual(['i-2', 'i-3']);
        expect(await claimOf(queues, 'c', 1_500, limits)).toEqual([]);
      }));

    it('delayMs: an item is not claimable before availableAt', () =>
      withQueues(async (queues) => {
        await queues.enqueue(item('later', { availableAt: 500 }));
        expect(await claimOf(queues, 'a', 499, {})).toEqual([]);
        expect(await claimOf(queues, 'a', 500, {})).toEqual(['later']);
      }));

    it('renew extends slots the owner still holds; a lapsed or taken slot is not renewed', () =>
      withQueues(async (queues) => {
        await fill(queues, 'i', 2);
        await claimOf(queues, 'a', 0, {});
        expect(await queues.renew('a', ['i-0'], 1_000, 500)).toEqual(['i-0']);
        expect(await queues.get('i-0')).toMatchObject({ expiresAt: 1_500 });
        expect(await queues.renew('b', ['i-0'], 1_000, 600)).toEqual([]);
        expect(await queues.renew('a', ['i-1'], 1_000, 1_000)).toEqual([]);
        expect((await claimOf(queues, 'b', 1_000, {})).sort()).toEqual(['i-1']);
        expect(await queues.renew('a', ['i-1'], 1_000, 1_100)).toEqual([]);
      }));

    it('a suspended item holds no slot and is not claimable; a released one is queued again', () =>
      withQueues(async (queues) => {
        await fill(queues, 'i', 3);
        expect(await claimOf(queues, 'a', 0, { concurrency: 1 })).toEqual(['i-0']);
        expect(await queues.release('i-0', 'b', { state: 'suspended' })).toBe(false);
        expect(await queues.release('i-0', 'a', { state: 'suspended' })).toBe(true);
        expect(await queues.get('i-0')).toMatchObject({ state: 'suspended' });
        expect(await claimOf(queues, 'a', 0, { concurrency: 1 })).toEqual(['i-1']);
        expect(await queues.release('i-1', 'a', { state: 'queued', availableAt: 200 })).toBe(true);
        expect(await claimOf(queues, 'a', 100, { concurrency: 1 })).toEqual(['i-2']);
        await queues.finish('i-2');
        expect(await claimOf(queues, 'a', 200, { concurrency: 1 })).toEqual(['i-1']);
      }));

    it('requeue: a suspended item due to resume waits for a slot again; others are left as they are', () =>
      withQueues(async (queues) => {
        await fill(queues, 'i', 3);
        expect(await claimOf(queues, 'a', 0, { concurrency: 1 })).toEqual(['i-0']);
        await queues.release('i-0', 'a', { state: 'suspended' });
        expect(await claimOf(queues, 'a', 0, { concurrency: 1 })).toEqual(['i-1']);
        // The resumed item keeps its place (first-enqueued first) but waits for the slot i-1 holds.
        expect(await queues.requeue('i-0', 50)).toMatchObject({ state: 'queued', availableAt: 50 });
        expect(await queues.get('i-0')).toMatchObject({ state: 'queued', availableAt: 50 });
        expect(await queues.admitting(['i-0'])).toEqual(['i-0']);
        expect(await claimOf(queues, 'b', 60, { concurrency: 1 })).toEqual([]);
        await queues.finish('i-1');
        expect(await claimOf(queues, 'b', 40, { concurrency: 1 })).toEqual(['i-2']);
        await queues.finish('i-2');
        expect(await claimOf(queues, 'b', 60, { concurrency: 1 })).toEqual(['i-0']);
        // A running item and a queued one are left alone; an execution without an item has none.
        expect(await queues.requeue('i-0', 500)).toMatchObject({ state: 'running', owner: 'b' });
        expect(await queues.get('i-0')).toMatchObject({ state: 'running', owner: 'b' });
        await queues.release('i-0', 'b', { state: 'queued', availableAt: 70 });
        expect(await queues.requeue('i-0', 500)).toMatchObject({ state: 'queued', availableAt: 70 });
        expect(await queues.get('i-0')).toMatchObject({ availableAt: 70 });
        expect(await queues.requeue('nope', 0)).toBeNull();
      }));

    it('admitting lists the ids that are queued or running, not suspended or unknown', () =>
      withQueues(async (queues) => {
        await fill(queues, 'i', 3);
        await claimOf(queues, 'a', 0, {}, 2);
        await queues.release('i-1', 'a', { state: 'suspended' });
        expect((await queues.admitting(['i-0', 'i-1', 'i-2', 'nope'])).sort()).toEqual(['i-0', 'i-2']);
        expect(await queues.admitting([])).toEqual([]);
      }));

    it('queues are independent: one queue’s slots do not count against another', () =>
      withQueues(async (queues) => {
        await fill(queues, 'i', 3);
        await fill(queues, 'j', 3, { queue: 'other' });
        expect(await claimOf(queues, 'a', 0, { concurrency: 1 })).toEqual(['i-0']);
        const other = await queues.claim({
          queue: 'other',
          owner: 'a',
          now: 0,
          ttlMs: 1_000,
          max: 10,
          limits: { concurrency: 1 },
          priority: false,
        });
        expect(other.map((claimed) => claimed.executionId)).toEqual(['j-0']);
      }));
  });
}
