/**
 * The fan-out cases of work (F3–F6, F8): chunk claims and their refusals, the attempt guard on
 * results, retry windows, processing failures, and recovery of expired leases.
 */
import { ErrorCodes } from '@skein/workflow-runtime';
import { describe, expect, it } from 'vitest';
import {
  chunkMessages,
  claimOf,
  createAndDispatch,
  type FanOutStoreSuiteOptions,
  type FanOutStores,
  planOf,
  refOf,
  successes,
} from './fan-out-fixtures.js';
import { rejectionOf, withStores } from './harness.js';

/** Register the work cases. */
export function fanOutWorkCases({ name, open }: FanOutStoreSuiteOptions): void {
  const run = (body: (stores: FanOutStores) => Promise<void>) => () => withStores(open, body);
  const claimRequest = (chunkId: number, workerId: string, now: number, writeEpoch = 1) => ({
    fanOutId: 'f1',
    shard: 'main',
    chunkId,
    writeEpoch,
    workerId,
    now,
    leaseMs: 1_000,
  });

  describe(`${name}: fan-out store: work`, () => {
    it(
      'F3: a chunk is claimed from an open lease; every other claim is refused with its reason',
      run(async ({ fanOuts }) => {
        await createAndDispatch(fanOuts, planOf('f1'), 5);
        const claim = await claimOf(fanOuts, 'f1', 0, 'w1', 2_000);
        expect(claim.items.map((item) => [item.index, item.attempt])).toEqual([
          [0, 1],
          [1, 1],
          [2, 1],
        ]);
        expect(claim).toMatchObject({ leaseExpiresAt: 3_000, writeEpoch: 1, waiting: 0 });
        const refusal = async (request: ReturnType<typeof claimRequest>) => {
          const result = await fanOuts.claimChunk(request);
          return result.claimed ? 'claimed' : result.reason;
        };
        expect(await refusal(claimRequest(0, 'w2', 2_500))).toBe('held');
        expect(await refusal(claimRequest(1, 'w2', 2_500, 2))).toBe('epoch');
        expect(await refusal(claimRequest(9, 'w2', 2_500))).toBe('unknown');
        expect(await refusal({ ...claimRequest(0, 'w2', 2_500), shard: 'other' })).toBe('unknown');
        await fanOuts.recordResults(refOf(claim), successes(claim), 2_600);
        expect(await fanOuts.releaseChunk(refOf(claim), { now: 2_700 })).toEqual({ status: 'done' });
        expect(await refusal(claimRequest(0, 'w2', 5_000))).toBe('finished');
        expect(await fanOuts.chunk('f1', 'main', 0)).toMatchObject({
          status: 'done',
          claims: 1,
          leaseToken: null,
        });
      }),
    );

    it(
      'F3: of concurrent claims of one chunk by many workers, exactly one wins',
      run(async ({ fanOuts }) => {
        await createAndDispatch(fanOuts, planOf('f1'), 3);
        const results = await Promise.all(
          Array.from({ length: 8 }, (_, i) => fanOuts.claimChunk(claimRequest(0, `w${i}`, 2_000))),
        );
        expect(results.filter((result) => result.claimed)).toHaveLength(1);
        expect(results.filter((result) => !result.claimed && result.reason === 'held')).toHaveLength(7);
        expect((await fanOuts.items('f1')).map((item) => item.attempt)).toEqual([1, 1, 1]);
      }),
    );

    it(
      'F4: a stale worker (its lease expired, the chunk re-claimed) is refused with an error and overwrites nothing',
      run(async ({ fanOuts }) => {
        await createAndDispatch(fanOuts, planOf('f1'), 3);
        const stale = await claimOf(fanOuts, 'f1', 0, 'w1', 2_000);
        const fresh = await claimOf(fanOuts, 'f1', 0, 'w2', 3_500);
        expect(fresh.items.map((item) => item.attempt)).toEqual([2, 2, 2]);
        await fanOuts.recordResults(refOf(fresh), successes(fresh).slice(0, 1), 3_600);
        const error = await rejectionOf(fanOuts.recordResults(refOf(stale), successes(stale), 3_700));
        expect(error).toMatchObject({ name: 'FanOutStaleAttemptError', code: ErrorCodes.FanOutStaleAttempt });
        // Even with the live chunk lease, the old attempt ids are refused.
        const withLiveLease = { ...refOf(stale), workerId: 'w2', leaseToken: fresh.leaseToken };
        const again = await rejectionOf(
          fanOuts.recordResults(withLiveLease, successes(stale).slice(1), 3_700),
        );
        expect(again.name).toBe('FanOutStaleAttemptError');
        expect(again.message).toContain('not the current attempt');
        const items = await fanOuts.items('f1');
        expect(items.map((item) => [item.status, item.output])).toEqual([
          ['succeeded', JSON.stringify({ index: 0, by: 'w2' })],
          ['running', null],
          ['running', null],
        ]);
        expect(await fanOuts.releaseChunk(refOf(stale), { now: 3_800 })).toEqual({ status: 'lost' });
        expect((await fanOuts.chunk('f1', 'main', 0))?.workerId).toBe('w2');
      }),
    );

    it(
      'F4: a batch with one stale result is refused whole; a result after the attempt lease expired is refused',
      run(async ({ fanOuts }) => {
        await createAndDispatch(fanOuts, planOf('f1'), 3);
        const claim = await claimOf(fanOuts, 'f1', 0, 'w1', 2_000);
        const batch = successes(claim);
        batch[2] = { ...batch[2]!, attemptId: 'an-old-attempt' };
        expect((await rejectionOf(fanOuts.recordResults(refOf(claim), batch, 2_100))).name).toBe(
          'FanOutStaleAttemptError',
        );
        expect((await fanOuts.counts('f1')).items).toMatchObject({ running: 3, succeeded: 0 });
        const late = await rejectionOf(fanOuts.recordResults(refOf(claim), successes(claim), 3_000));
        expect(late.name).toBe('FanOutStaleAttemptError');
        expect((await fanOuts.counts('f1')).items.succeeded).toBe(0);
      }),
    );

    it(
      'F4/F5: a release carries the last results: persisted under the attempt guard, then the chunk released with them counted',
      run(async ({ fanOuts }) => {
        await createAndDispatch(fanOuts, planOf('f1'), 6);
        const first = await claimOf(fanOuts, 'f1', 0, 'w1', 2_000);
        await fanOuts.recordResults(refOf(first), successes(first).slice(0, 1), 2_100);
        expect(
          await fanOuts.releaseChunk(refOf(first), { now: 2_200, results: successes(first).slice(1) }),
        ).toEqual({ status: 'done' });
        expect(await fanOuts.chunk('f1', 'main', 0)).toMatchObject({ status: 'done', leaseToken: null });
        const second = await claimOf(fanOuts, 'f1', 1, 'w1', 2_000);
        const [a, b] = second.items;
        // Item 5 has no result yet (the worker is stopping): the chunk is requeued for it.
        const released = await fanOuts.releaseChunk(refOf(second), {
          now: 2_300,
          results: [
            successes(second)[0]!,
            {
              index: b!.index,
              attemptId: b!.attemptId,
              attempt: 1,
              status: 'failed',
              error: 'flaky',
              retryAt: 9_000,
            },
          ],
        });
        expect(released).toMatchObject({ status: 'requeued', availableAt: 2_300 });
        const items = await fanOuts.items('f1');
        expect(items.map((item) => [item.index, item.status, item.output, item.error])).toEqual([
          [0, 'succeeded', JSON.stringify({ index: 0, by: 'w1' }), null],
          [1, 'succeeded', JSON.stringify({ index: 1, by: 'w1' }), null],
          [2, 'succeeded', JSON.stringify({ index: 2, by: 'w1' }), null],
          [a!.index, 'succeeded', JSON.stringify({ index: 3, by: 'w1' }), null],
          [4, 'retry_scheduled', null, 'flaky'],
          [5, 'pending', null, null],
        ]);
      }),
    );

    it(
      'F4: a release whose last results are stale is refused whole and releases nothing',
      run(async ({ fanOuts }) => {
        await createAndDispatch(fanOuts, planOf('f1'), 3);
        const stale = await claimOf(fanOuts, 'f1', 0, 'w1', 2_000);
        const fresh = await claimOf(fanOuts, 'f1', 0, 'w2', 3_500);
        const error = await rejectionOf(
          fanOuts.releaseChunk(refOf(stale), { now: 3_600, results: successes(stale) }),
        );
        expect(error).toMatchObject({ name: 'FanOutStaleAttemptError', code: ErrorCodes.FanOutStaleAttempt });
        const batch = successes(fresh);
        batch[2] = { ...batch[2]!, attemptId: 'an-old-attempt' };
        const mixed = await rejectionOf(fanOuts.releaseChunk(refOf(fresh), { now: 3_600, results: batch }));
        expect(mixed.name).toBe('FanOutStaleAttemptError');
        const twice = await rejectionOf(
          fanOuts.releaseChunk(refOf(fresh), { now: 3_600, results: [batch[0]!, batch[0]!] }),
        );
        expect(twice.name).toBe('InvalidInputError');
        expect(await fanOuts.chunk('f1', 'main', 0)).toMatchObject({
          status: 'leased',
          workerId: 'w2',
          leaseToken: fresh.leaseToken,
        });
        expect((await fanOuts.counts('f1')).items).toMatchObject({ running: 3, succeeded: 0, pending: 0 });
        expect(await fanOuts.releaseChunk(refOf(fresh), { now: 3_700, results: successes(fresh) })).toEqual({
          status: 'done',
        });
        expect((await fanOuts.counts('f1')).items.succeeded).toBe(3);
      }),
    );

    it(
      'F3/F4: renewing extends the chunk lease and the attempts, so results land after the first expiry',
      run(async ({ fanOuts }) => {
        await createAndDispatch(fanOuts, planOf('f1'), 3);
        const claim = await claimOf(fanOuts, 'f1', 0, 'w1', 2_000);
        expect(await fanOuts.renewChunk(refOf(claim), 2_900, 1_000)).toBe(true);
        expect((await fanOuts.claimChunk(claimRequest(0, 'w2', 3_500))).claimed).toBe(false);
        expect(await fanOuts.recordResults(refOf(claim), successes(claim), 3_800)).toEqual({
          succeeded: 3,
          failed: 0,
          retryScheduled: 0,
        });
        expect(await fanOuts.renewChunk({ ...refOf(claim), leaseToken: 'other' }, 3_800, 1_000)).toBe(false);
        expect(await fanOuts.renewChunk(refOf(claim), 4_000, 1_000)).toBe(false);
      }),
    );

    it(
      'F5: a failure with budget waits for its retry window: no claim before it, one attempt after it',
      run(async ({ fanOuts, outbox }) => {
        await createAndDispatch(fanOuts, planOf('f1'), 3);
        const claim = await claimOf(fanOuts, 'f1', 0, 'w1', 2_000);
        const [a, b, c] = claim.items;
        const recorded = await fanOuts.recordResults(
          refOf(claim),
          [
            { ...successes(claim)[0]!, index: a!.index },
            {
              index: b!.index,
              attemptId: b!.attemptId,
              attempt: 1,
              status: 'failed',
              error: 'flaky',
              retryAt: 9_000,
            },
            {
              index: c!.index,
              attemptId: c!.attemptId,
              attempt: 1,
              status: 'failed',
              error: 'bad input',
              retryAt: null,
            },
          ],
          2_100,
        );
        expect(recorded).toEqual({ succeeded: 1, failed: 1, retryScheduled: 1 });
        const released = await fanOuts.releaseChunk(refOf(claim), { now: 2_200 });
        expect(released).toMatchObject({ status: 'waiting', availableAt: 9_000 });
        const next = (await chunkMessages(outbox)).find((m) => m.reason === 'retry');
        expect(next).toMatchObject({ chunkId: 0, availableAt: 9_000 });
        expect(released.status === 'waiting' && released.messageId).toBe(next?.id);
        const early = await fanOuts.claimChunk(claimRequest(0, 'w2', 8_999));
        expect(early.claimed ? 'claimed' : early.reason).toBe('not-yet');
        expect((await fanOuts.chunk('f1', 'main', 0))?.claims).toBe(1);
        const retry = await claimOf(fanOuts, 'f1', 0, 'w2', 9_000);
        expect(retry.items.map((item) => [item.index, item.attempt])).toEqual([[1, 2]]);
        const [only] = retry.items;
        await fanOuts.recordResults(
          refOf(retry),
          [
            {
              index: 1,
              attemptId: only!.attemptId,
              attempt: 2,
              status: 'failed',
              error: 'flaky again',
              retryAt: 20_000,
            },
          ],
          9_100,
        );
        // maxAttempts (2) ends the loop: the second failure is final despite its retryAt.
        expect(await fanOuts.releaseChunk(refOf(retry), { now: 9_200 })).toEqual({ status: 'done' });
        const items = await fanOuts.items('f1');
        expect(items.map((item) => [item.status, item.failures, item.attempt, item.error])).toEqual([
          ['succeeded', 0, 1, null],
          ['failed', 2, 2, 'flaky again'],
          ['failed', 1, 1, 'bad input'],
        ]);
      }),
    );

    it(
      'F5: a worker’s own failures requeue the chunk on a separate budget, then fail it',
      run(async ({ fanOuts, outbox }) => {
        await createAndDispatch(fanOuts, planOf('f1'), 3);
        let now = 2_000;
        for (let i = 1; i <= 2; i += 1) {
          const claim = await claimOf(fanOuts, 'f1', 0, 'w1', now);
          if (i === 1) await fanOuts.recordResults(refOf(claim), successes(claim).slice(0, 1), now + 1);
          const released = await fanOuts.releaseChunk(refOf(claim), {
            now: now + 2,
            processingFailure: 'out of memory',
            maxProcessingFailures: 3,
            requeueDelayMs: 500,
          });
          expect(released).toMatchObject({ status: 'requeued', availableAt: now + 502 });
          now += 1_000;
        }
        expect((await fanOuts.items('f1')).map((item) => [item.status, item.failures])).toEqual([
          ['succeeded', 0],
          ['pending', 0],
          ['pending', 0],
        ]);
        const last = await claimOf(fanOuts, 'f1', 0, 'w1', now);
        const failed = await fanOuts.releaseChunk(refOf(last), {
          now: now + 1,
          processingFailure: 'out of memory',
          maxProcessingFailures: 3,
        });
        expect(failed.status).toBe('failed');
        expect(await fanOuts.chunk('f1', 'main', 0)).toMatchObject({
          status: 'failed',
          processingFailures: 3,
        });
        const items = await fanOuts.items('f1');
        expect(items.map((item) => item.status)).toEqual(['succeeded', 'failed', 'failed']);
        expect(items[1]?.error).toContain('out of memory');
        expect((await chunkMessages(outbox)).filter((m) => m.reason === 'requeue')).toHaveLength(2);
      }),
    );

    it(
      'F8: recovery marks the attempts of an expired lease stale and requeues with a fresh message each time, then fails the chunk',
      run(async ({ fanOuts, outbox }) => {
        await createAndDispatch(fanOuts, planOf('f1'), 6);
        const live = await claimOf(fanOuts, 'f1', 1, 'w9', 2_000, 'main', 60_000);
        let now = 2_000;
        const ids: string[] = [];
        for (let i = 0; i < 2; i += 1) {
          const claim = await claimOf(fanOuts, 'f1', 0, `w${i}`, now);
          const recovered = await fanOuts.recoverExpired({ now: now + 1_000, limit: 10, recoveryLimit: 2 });
          expect(recovered).toEqual([
            expect.objectContaining({ chunkId: 0, outcome: 'requeued', staleAttempts: 3 }),
          ]);
          ids.push(recovered[0]!.messageId!);
          expect(
            (await rejectionOf(fanOuts.recordResults(refOf(claim), successes(claim), now + 1_001))).name,
          ).toBe('FanOutStaleAttemptError');
          now += 2_000;
        }
        const recoveryMessages = (await chunkMessages(outbox)).filter((m) => m.reason === 'recovery');
        expect(recoveryMessages.map((m) => m.id)).toEqual(ids);
        expect(new Set(ids).size).toBe(2);
        expect((await fanOuts.items('f1', { limit: 3 })).map((item) => [item.status, item.attempt])).toEqual([
          ['pending', 2],
          ['pending', 2],
          ['pending', 2],
        ]);
        await claimOf(fanOuts, 'f1', 0, 'w3', now);
        const last = await fanOuts.recoverExpired({ now: now + 1_000, limit: 10, recoveryLimit: 2 });
        expect(last).toEqual([expect.objectContaining({ chunkId: 0, outcome: 'failed' })]);
        expect(await fanOuts.chunk('f1', 'main', 0)).toMatchObject({ status: 'failed', recoveries: 2 });
        expect((await fanOuts.chunk('f1', 'main', 1))?.workerId).toBe(live.workerId);
        expect((await fanOuts.counts('f1')).items).toMatchObject({ failed: 3, running: 3 });
      }),
    );

    it(
      'F8: a chunk whose holder recorded every result but died before releasing is recovered as done',
      run(async ({ fanOuts, outbox }) => {
        await createAndDispatch(fanOuts, planOf('f1'), 3);
        const claim = await claimOf(fanOuts, 'f1', 0, 'w1', 2_000);
        await fanOuts.recordResults(refOf(claim), successes(claim), 2_100);
        const recovered = await fanOuts.recoverExpired({ now: 3_000, limit: 10 });
        expect(recovered).toEqual([
          expect.objectContaining({ chunkId: 0, outcome: 'done', staleAttempts: 0 }),
        ]);
        expect((await chunkMessages(outbox)).filter((m) => m.reason === 'recovery')).toEqual([]);
        expect(await fanOuts.recoverExpired({ now: 9_000, limit: 10 })).toEqual([]);
      }),
    );

    it(
      'F6: every item has exactly one accepted result; items page in index order and the counts equal the plan',
      run(async ({ fanOuts }) => {
        const plan = planOf('f1', { chunkSize: 4, shards: ['main'] });
        await createAndDispatch(fanOuts, plan, 10);
        for (const chunkId of [2, 0, 1]) {
          const claim = await claimOf(fanOuts, 'f1', chunkId, 'w1', 2_000);
          await fanOuts.recordResults(refOf(claim), successes(claim), 2_001);
          const twice = await rejectionOf(fanOuts.recordResults(refOf(claim), successes(claim), 2_002));
          expect(twice.message).toContain('succeeded, not running');
          await fanOuts.releaseChunk(refOf(claim), { now: 2_003 });
        }
        const first = await fanOuts.items('f1', { limit: 4 });
        const rest = await fanOuts.items('f1', { afterIndex: first.at(-1)!.index, limit: 100 });
        expect([...first, ...rest].map((item) => item.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        expect([...first, ...rest].every((item) => item.status === 'succeeded' && item.attempt === 1)).toBe(
          true,
        );
        expect(await fanOuts.chunkCounts('f1')).toEqual({ open: 0, leased: 0, done: 3, failed: 0 });
        expect(await fanOuts.counts('f1')).toEqual({
          chunks: { open: 0, leased: 0, done: 3, failed: 0 },
          items: { pending: 0, running: 0, retry_scheduled: 0, succeeded: 10, failed: 0 },
        });
      }),
    );
  });
}
