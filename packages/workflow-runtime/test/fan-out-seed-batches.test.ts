/**
 * createFanOut seeds in batches (F1, F2): one `seedChunks` call per batch and shard store, the
 * home store's carrying the creation cursor, so a plan over one store needs no `recordSeeded`;
 * a bad `seedBatchItems` is refused before anything is written.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTask, type FanOutStore, openMemoryStores } from '../src/index.js';
import { createFanOut } from '../src/index-internal.js';
import type { FanOutPlan } from '../src/index-spi.js';

const task = defineTask({ name: 'score', input: z.object({ i: z.number() }), run: async ({ i }) => i });

const planOf = (fanOutId: string, shards: string[]): FanOutPlan => ({
  fanOutId,
  executionId: `exec-${fanOutId}`,
  name: 'cases',
  task: 'score',
  taskVersion: 1,
  chunkSize: 10,
  shards,
  required: true,
  maxAttempts: 3,
});

const source = (total: number) => (from: number, limit: number) =>
  Array.from({ length: Math.max(0, Math.min(limit, total - from)) }, (_, k) => ({ i: from + k }));

/** The store's calls that write seeds or the cursor, in order: `seedChunks(<chunks>, cursor?)`, `recordSeeded`. */
function recording(store: FanOutStore): { store: FanOutStore; calls: string[] } {
  const calls: string[] = [];
  const wrapped = Object.create(store) as FanOutStore;
  wrapped.seedChunks = (seeds, cursor) => {
    calls.push(
      `seedChunks(${seeds.map((s) => s.chunkId).join(',')}${cursor === undefined ? '' : ', cursor'})`,
    );
    return store.seedChunks(seeds, cursor);
  };
  wrapped.seedChunk = (seed) => {
    calls.push(`seedChunk(${seed.chunkId})`);
    return store.seedChunk(seed);
  };
  wrapped.recordSeeded = (...args) => {
    calls.push('recordSeeded');
    return store.recordSeeded(...args);
  };
  return { store: wrapped, calls };
}

describe('createFanOut: batched seeds', () => {
  it('F1/F2: one store: a seedChunks per batch moves the cursor with its seeds; every item is seeded once', async () => {
    const stores = openMemoryStores();
    const { store, calls } = recording(stores.fanOuts);
    const row = await createFanOut({
      home: store,
      shards: { main: store },
      plan: planOf('f1', ['main']),
      task,
      items: source(95),
      owner: 'a',
      seedBatchItems: 30,
    });
    expect(row).toMatchObject({ status: 'dispatched', total: 95, seededChunks: 10, seededItems: 95 });
    expect(calls).toEqual([
      'seedChunks(0,1,2, cursor)',
      'seedChunks(3,4,5, cursor)',
      'seedChunks(6,7,8, cursor)',
      'seedChunks(9, cursor)',
    ]);
    const items = await stores.fanOuts.items('f1', { limit: 200 });
    expect(items.map((item) => item.index)).toEqual(Array.from({ length: 95 }, (_, i) => i));
  });

  it('F1/F2: two stores: the other shard is seeded first, then the home store with the cursor, or recordSeeded', async () => {
    const home = recording(openMemoryStores().fanOuts);
    const other = recording(openMemoryStores().fanOuts);
    const row = await createFanOut({
      home: home.store,
      shards: { a: home.store, b: other.store },
      plan: planOf('f2', ['a', 'b']),
      task,
      items: source(40),
      owner: 'a',
      seedBatchItems: 30,
    });
    expect(row).toMatchObject({ status: 'dispatched', total: 40, seededChunks: 4 });
    expect(other.calls).toEqual(['seedChunks(1)', 'seedChunks(3)']);
    // The second batch (chunk 3) has no home chunk: the cursor moves on its own.
    expect(home.calls).toEqual(['seedChunks(0,2, cursor)', 'recordSeeded']);
  });

  it('F1/F2: the next batch is read while one is seeded; batches are seeded one at a time, in order', async () => {
    const stores = openMemoryStores();
    const events: string[] = [];
    let seeding = 0;
    let most = 0;
    const store = Object.create(stores.fanOuts) as FanOutStore;
    store.seedChunks = async (seeds, cursor) => {
      seeding += 1;
      most = Math.max(most, seeding);
      events.push(`seed ${seeds[0]!.chunkId}`);
      // The store's answer comes on later turns, as a server's does.
      for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
      const result = await stores.fanOuts.seedChunks(seeds, cursor);
      events.push(`seeded ${seeds[0]!.chunkId}`);
      seeding -= 1;
      return result;
    };
    const row = await createFanOut({
      home: store,
      shards: { main: store },
      plan: planOf('f4', ['main']),
      task,
      items: (from, limit) => {
        events.push(`read ${from / 10}`);
        return source(60)(from, limit);
      },
      owner: 'a',
      seedBatchItems: 20,
    });
    expect(row).toMatchObject({ status: 'dispatched', total: 60, seededChunks: 6, seededItems: 60 });
    expect(most).toBe(1);
    // Chunks 2 and 3 (the second batch) are read while chunks 0 and 1 are seeded, and so on.
    expect(events).toEqual([
      'read 0',
      'read 1',
      'seed 0',
      'read 2',
      'read 3',
      'seeded 0',
      'seed 2',
      'read 4',
      'read 5',
      'seeded 2',
      'seed 4',
      'read 6',
      'seeded 4',
    ]);
  });

  it('F2: a store error in a batch seeded while the next is read rejects the creation with that error', async () => {
    const stores = openMemoryStores();
    const store = Object.create(stores.fanOuts) as FanOutStore;
    let reads = 0;
    store.seedChunks = async () => {
      await new Promise((resolve) => setImmediate(resolve));
      throw new Error('disk full');
    };
    const created = createFanOut({
      home: store,
      shards: { main: store },
      plan: planOf('f5', ['main']),
      task,
      items: (from, limit) => {
        reads += 1;
        return source(60)(from, limit);
      },
      owner: 'a',
      seedBatchItems: 20,
    });
    await expect(created).rejects.toThrow('disk full');
    // The first batch (2 pages) and the one read while it was seeded, no further.
    expect(reads).toBe(4);
    expect((await stores.fanOuts.get('f5'))?.seededChunks).toBe(0);
  });

  it('L7: a seedBatchItems that is not an integer >= 1 is refused before anything is written', async () => {
    const stores = openMemoryStores();
    for (const seedBatchItems of [0, 1.5, Number.NaN]) {
      const created = createFanOut({
        home: stores.fanOuts,
        shards: { main: stores.fanOuts },
        plan: planOf('f3', ['main']),
        task,
        items: source(5),
        owner: 'a',
        seedBatchItems,
      });
      await expect(created).rejects.toMatchObject({ name: 'InvalidInputError' });
      await expect(created).rejects.toThrow(/seedBatchItems/);
    }
    expect(await stores.fanOuts.get('f3')).toBeNull();
  });
});
