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
