/**
 * The fan-out cases of batched seeding (F1, F2): `seedChunks` seeds many chunks in one
 * transaction, each as `seedChunk` would, and moves the creation cursor with them only when
 * none is a mismatch and the creation lease is the caller's.
 */
import { INITIAL_WRITE_EPOCH } from '@skein/workflow-runtime/spi';
import { describe, expect, it } from 'vitest';
import {
  type FanOutStoreSuiteOptions,
  type FanOutStores,
  inputsOf,
  leaseOf,
  planOf,
} from './fan-out-fixtures.js';
import { rejectionOf, withStores } from './harness.js';

/** Chunk `chunkId` (3 items, the fixtures' plan) of fan-out `fanOutId`, inputs from `shift`. */
function seedOf(fanOutId: string, chunkId: number, shift = 0) {
  return {
    fanOutId,
    shard: 'main',
    chunkId,
    storeAlias: 'main',
    firstIndex: chunkId * 3,
    inputs: inputsOf(3, chunkId * 3 + shift),
    writeEpoch: INITIAL_WRITE_EPOCH,
    maxAttempts: 2,
    now: 1_000,
  };
}

/** Register the batched-seed cases. */
export function fanOutSeedBatchCases({ name, open }: FanOutStoreSuiteOptions): void {
  const run = (body: (stores: FanOutStores) => Promise<void>) => () => withStores(open, body);

  describe(`${name}: fan-out store: batched seeds`, () => {
    it(
      'F2: a batch seeds every chunk and moves the cursor with them; again, every chunk exists',
      run(async ({ fanOuts }) => {
        const created = await fanOuts.create(planOf('f1'), leaseOf('a'));
        const seeds = [0, 1, 2].map((c) => seedOf('f1', c));
        const cursor = { fanOutId: 'f1', token: created.token!, seededChunks: 3, seededItems: 9 };
        expect(await fanOuts.seedChunks(seeds, cursor)).toEqual({
          outcomes: ['seeded', 'seeded', 'seeded'],
          cursor: true,
        });
        expect(await fanOuts.get('f1')).toMatchObject({ seededChunks: 3, seededItems: 9 });
        expect((await fanOuts.items('f1')).map((item) => [item.index, item.chunkId, item.input])).toEqual(
          inputsOf(9).map((input, index) => [index, Math.floor(index / 3), input]),
        );
        expect(
          await fanOuts.seedChunks([...seeds, seedOf('f1', 3)], {
            ...cursor,
            seededChunks: 4,
            seededItems: 12,
          }),
        ).toEqual({ outcomes: ['exists', 'exists', 'exists', 'seeded'], cursor: true });
        expect(await fanOuts.get('f1')).toMatchObject({ seededChunks: 4, seededItems: 12 });
        expect(await fanOuts.dispatch('f1', created.token!, { total: 12, now: 1_000 })).toBe(true);
      }),
    );

    it(
      'F2: a mismatch in a batch leaves the cursor where it was and its chunk as it was',
      run(async ({ fanOuts }) => {
        const created = await fanOuts.create(planOf('f1'), leaseOf('a'));
        expect((await fanOuts.seedChunks([seedOf('f1', 0)])).outcomes).toEqual(['seeded']);
        const cursor = { fanOutId: 'f1', token: created.token!, seededChunks: 2, seededItems: 6 };
        const result = await fanOuts.seedChunks([seedOf('f1', 0, 1), seedOf('f1', 1)], cursor);
        expect(result).toEqual({ outcomes: ['mismatch', 'seeded'], cursor: false });
        expect(await fanOuts.get('f1')).toMatchObject({ seededChunks: 0, seededItems: 0 });
        expect((await fanOuts.items('f1', { limit: 3 })).map((item) => item.input)).toEqual(inputsOf(3));
      }),
    );

    it(
      'F2: a creator whose lease was claimed seeds idempotently but cannot move the cursor',
      run(async ({ fanOuts }) => {
        const plan = planOf('f1');
        const first = await fanOuts.create(plan, leaseOf('a', 1_000));
        const second = await fanOuts.create(plan, leaseOf('b', 5_000));
        expect(second.outcome).toBe('claimed');
        const stale = { fanOutId: 'f1', token: first.token!, seededChunks: 1, seededItems: 3 };
        expect(await fanOuts.seedChunks([seedOf('f1', 0)], stale)).toEqual({
          outcomes: ['seeded'],
          cursor: false,
        });
        expect(await fanOuts.get('f1')).toMatchObject({ seededChunks: 0, creationOwner: 'b' });
        const live = { ...stale, token: second.token! };
        expect(await fanOuts.seedChunks([seedOf('f1', 0)], live)).toEqual({
          outcomes: ['exists'],
          cursor: true,
        });
        expect(await fanOuts.get('f1')).toMatchObject({ seededChunks: 1, seededItems: 3 });
      }),
    );

    it(
      'L7: an empty batch, a bad seed or a bad cursor is refused before anything is written',
      run(async ({ fanOuts }) => {
        const created = await fanOuts.create(planOf('f1'), leaseOf('a'));
        const cursor = { fanOutId: 'f1', token: created.token!, seededChunks: 2, seededItems: 6 };
        expect(await rejectionOf(fanOuts.seedChunks([], cursor))).toMatchObject({
          name: 'InvalidInputError',
        });
        const bad = { ...seedOf('f1', 1), inputs: [] };
        const error = await rejectionOf(fanOuts.seedChunks([seedOf('f1', 0), bad], cursor));
        expect(error).toMatchObject({ name: 'InvalidInputError' });
        expect(error.message).toContain('inputs');
        const badCursor = { ...cursor, seededChunks: -1 };
        expect(await rejectionOf(fanOuts.seedChunks([seedOf('f1', 0)], badCursor))).toMatchObject({
          name: 'InvalidInputError',
        });
        expect(await fanOuts.items('f1')).toEqual([]);
        expect(await fanOuts.get('f1')).toMatchObject({ seededChunks: 0 });
      }),
    );
  });
}
