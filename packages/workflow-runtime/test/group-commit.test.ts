/**
 * GroupCommit hands each caller its own outcome (L4) however a batch is flushed: a synchronous
 * flush (SQLite's) settles its callers in the same turn, an asynchronous one when it resolves,
 * and a queue longer than `maxBatch` is cut into batches that keep every request's outcome.
 */
import { GroupCommit, type Outcome } from '@skein/workflow-runtime/spi';
import { describe, expect, it } from 'vitest';

/** Refuse odd numbers, double the rest. */
function outcomes(batch: readonly number[]): Outcome<number>[] {
  return batch.map((n) =>
    n % 2 === 0 ? { ok: true, value: n * 2 } : { ok: false, error: new Error(`odd ${n}`) },
  );
}

describe('GroupCommit', () => {
  it('L4: a synchronous flush past maxBatch settles every caller with its own outcome, in batches of maxBatch', async () => {
    const batches: number[][] = [];
    const group = new GroupCommit<number, number>(
      (batch) => {
        batches.push([...batch]);
        return outcomes(batch);
      },
      { maxBatch: 3 },
    );

    const settled = await Promise.allSettled([0, 2, 1, 4, 3].map((n) => group.submit(n)));

    expect(batches).toEqual([
      [0, 2, 1],
      [4, 3],
    ]);
    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message))).toEqual([
      0,
      4,
      'odd 1',
      8,
      'odd 3',
    ]);
    expect(group.pending).toBe(0);
  });

  it('L4: an asynchronous flush that throws fails its own batch only; the next batch is flushed', async () => {
    let calls = 0;
    const group = new GroupCommit<number, number>(
      async (batch) => {
        calls += 1;
        if (calls === 1) throw new Error('disk gone');
        return outcomes(batch);
      },
      { maxBatch: 2 },
    );

    const settled = await Promise.allSettled([0, 2, 4].map((n) => group.submit(n)));

    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message))).toEqual([
      'disk gone',
      'disk gone',
      8,
    ]);
  });

  it('a flush that returns too few outcomes rejects the callers left without one', async () => {
    const group = new GroupCommit<number, number>((batch) => outcomes(batch).slice(0, 1));

    const settled = await Promise.allSettled([0, 2].map((n) => group.submit(n)));

    expect(settled[0]).toEqual({ status: 'fulfilled', value: 0 });
    expect(settled[1]).toMatchObject({ status: 'rejected', reason: { message: /too few outcomes/ } });
  });
});
