/**
 * `blockageStoreSuite`: one row per execution; recording at the row's seq counts an attempt
 * and keeps `since`, recording at another seq starts over (adr/0058).
 */
import { type BlockageStore, ErrorCodes } from '@skein/workflow-runtime';
import type { BlockageFailure } from '@skein/workflow-runtime/spi';
import { describe, expect, it } from 'vitest';
import { type StoresWith, withStores } from './harness.js';

/** Options of {@link blockageStoreSuite}: `open` returns stores with a blockage store. */
export interface BlockageStoreSuiteOptions {
  name: string;
  open: () =>
    | (Omit<StoresWith<'events'>, 'events'> & { blockages: BlockageStore })
    | Promise<Omit<StoresWith<'events'>, 'events'> & { blockages: BlockageStore }>;
}

function failure(executionId: string, seq: number, at: number, message = 'replay diverged'): BlockageFailure {
  return { executionId, seq, code: ErrorCodes.NonDeterminism, message, at };
}

/**
 * Register the blockage-store conformance tests in the current vitest file.
 * @example
 * blockageStoreSuite({ name: 'memory', open: () => openMemoryStores() });
 */
export function blockageStoreSuite({ name, open }: BlockageStoreSuiteOptions): void {
  describe(`${name}: blockage store`, () => {
    it('record at the same seq counts one more attempt and keeps since; another seq starts over', () =>
      withStores(open, async ({ blockages }) => {
        expect(await blockages.get('x')).toBeNull();
        const first = {
          executionId: 'x',
          seq: 4,
          code: ErrorCodes.NonDeterminism,
          message: 'replay diverged',
        };
        expect(await blockages.record(failure('x', 4, 1_000))).toEqual({
          ...first,
          since: 1_000,
          attempts: 1,
          lastAt: 1_000,
        });
        expect(await blockages.record(failure('x', 4, 3_000, 'again'))).toEqual({
          ...first,
          message: 'again',
          since: 1_000,
          attempts: 2,
          lastAt: 3_000,
        });
        expect(await blockages.get('x')).toEqual({
          ...first,
          message: 'again',
          since: 1_000,
          attempts: 2,
          lastAt: 3_000,
        });
        expect(await blockages.record(failure('x', 6, 9_000))).toEqual({
          ...first,
          seq: 6,
          since: 9_000,
          attempts: 1,
          lastAt: 9_000,
        });
      }));

    it('concurrent records at one seq count every attempt', () =>
      withStores(open, async ({ blockages }) => {
        await Promise.all(Array.from({ length: 12 }, (_, i) => blockages.record(failure('c', 2, 100 + i))));
        expect((await blockages.get('c'))?.attempts).toBe(12);
      }));

    it('list pages by execution id after a cursor; clear deletes one row only', () =>
      withStores(open, async ({ blockages }) => {
        for (const id of ['b', 'd', 'a', 'c']) await blockages.record(failure(id, 1, 10));
        const ids = async (query: { after?: string; limit: number }) =>
          (await blockages.list(query)).map((row) => row.executionId);
        expect(await ids({ limit: 3 })).toEqual(['a', 'b', 'c']);
        expect(await ids({ after: 'c', limit: 3 })).toEqual(['d']);
        await blockages.clear('b');
        await blockages.clear('never-blocked');
        expect(await ids({ limit: 10 })).toEqual(['a', 'c', 'd']);
        expect(await blockages.get('b')).toBeNull();
      }));
  });
}
