/** `snapshotStoreSuite`: the store-level part of L5 (snapshots are a cache of the newest fold). */
import { describe, expect, it } from 'vitest';
import { type SuiteOptions, withStores } from './harness.js';

/** Options of {@link snapshotStoreSuite}. */
export type SnapshotStoreSuiteOptions = SuiteOptions<'snapshots'>;

/**
 * Register the snapshot-store conformance tests in the current vitest file.
 * @example
 * snapshotStoreSuite({ name: 'memory', open: () => openMemoryStores() });
 */
export function snapshotStoreSuite({ name, open }: SnapshotStoreSuiteOptions): void {
  describe(`${name}: snapshot store`, () => {
    it('L5: latest returns the newest put; a newer put replaces it', () =>
      withStores(open, async ({ snapshots }) => {
        expect(await snapshots.latest('s')).toBeNull();
        await snapshots.put({ executionId: 's', seq: 3, state: '{"n":3}' });
        await snapshots.put({ executionId: 's', seq: 7, state: '{"n":7}' });
        expect(await snapshots.latest('s')).toEqual({ executionId: 's', seq: 7, state: '{"n":7}' });
      }));

    it('L5: an older put never replaces a newer snapshot', () =>
      withStores(open, async ({ snapshots }) => {
        await snapshots.put({ executionId: 's', seq: 9, state: 'nine' });
        await snapshots.put({ executionId: 's', seq: 4, state: 'four' });
        expect(await snapshots.latest('s')).toEqual({ executionId: 's', seq: 9, state: 'nine' });
      }));

    it('L5: delete removes the snapshots of one execution only', () =>
      withStores(open, async ({ snapshots }) => {
        await snapshots.put({ executionId: 'a', seq: 1, state: 'a1' });
        await snapshots.put({ executionId: 'b', seq: 2, state: 'b2' });
        await snapshots.delete('a');
        await snapshots.delete('never-saved');
        expect(await snapshots.latest('a')).toBeNull();
        expect(await snapshots.latest('b')).toEqual({ executionId: 'b', seq: 2, state: 'b2' });
        await snapshots.put({ executionId: 'a', seq: 0, state: 'a0' });
        expect(await snapshots.latest('a')).toEqual({ executionId: 'a', seq: 0, state: 'a0' });
      }));

    it('snapshot state text round-trips exactly', () =>
      withStores(open, async ({ snapshots }) => {
        const state = `{"s":"quotes ' \\" 🧵 ünï \\u0000 ${'z'.repeat(100_000)}"}`;
        await snapshots.put({ executionId: 'big ü 🧵', seq: 1, state });
        expect((await snapshots.latest('big ü 🧵'))?.state).toBe(state);
      }));
  });
}
