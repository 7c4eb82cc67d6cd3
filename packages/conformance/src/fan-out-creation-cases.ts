/**
 * The fan-out cases of creation and dispatch (F1, F2, placement): the creation lease, the
 * idempotent seed, the plan check, and dispatch only once the cursor covers the plan.
 */
import { ErrorCodes } from '@skein/workflow-runtime';
import { INITIAL_WRITE_EPOCH } from '@skein/workflow-runtime/spi';
import { describe, expect, it } from 'vitest';
import {
  chunkMessages,
  createAndDispatch,
  type FanOutStoreSuiteOptions,
  type FanOutStores,
  inputsOf,
  leaseOf,
  planOf,
  seedRange,
} from './fan-out-fixtures.js';
import { rejectionOf, withStores } from './harness.js';

/** Register the creation cases. */
export function fanOutCreationCases({ name, open }: FanOutStoreSuiteOptions): void {
  const run = (body: (stores: FanOutStores) => Promise<void>) => () => withStores(open, body);

  describe(`${name}: fan-out store: creation`, () => {
    it(
      'F2: the creation lease is held by one creator; an expired one is claimed for the same fan-out',
      run(async ({ fanOuts }) => {
        const plan = planOf('f1');
        const first = await fanOuts.create(plan, leaseOf('a', 1_000));
        expect(first).toMatchObject({ outcome: 'created', fanOut: { status: 'creating', seededChunks: 0 } });
        expect((await fanOuts.create(plan, leaseOf('b', 1_500))).outcome).toBe('held');
        await seedRange(fanOuts, plan, first.token!, 0, 1, 5);
        const second = await fanOuts.create(plan, leaseOf('b', 2_000));
        expect(second.outcome).toBe('claimed');
        expect(second.token).not.toBe(first.token);
        expect(second.fanOut).toMatchObject({ seededChunks: 1, seededItems: 3, creationOwner: 'b' });
        // The first creator's token is dead: it can neither advance the cursor nor dispatch.
        expect(await fanOuts.recordSeeded('f1', first.token!, 2, 5)).toBe(false);
        expect(await fanOuts.renewCreation('f1', first.token!, 2_000, 1_000)).toBe(false);
        expect(await fanOuts.dispatch('f1', first.token!, { total: 3, now: 2_000 })).toBe(false);
        expect(await fanOuts.renewCreation('f1', second.token!, 2_500, 1_000)).toBe(true);
        expect((await fanOuts.create(plan, leaseOf('a', 3_000))).outcome).toBe('held');
        expect((await fanOuts.get('f1'))?.status).toBe('creating');
      }),
    );

    it(
      'F2: seeding a chunk is idempotent; a chunk seeded differently is a mismatch and changes nothing',
      run(async ({ fanOuts }) => {
        const seed = {
          fanOutId: 'f1',
          shard: 'main',
          chunkId: 0,
          storeAlias: 'main',
          firstIndex: 0,
          inputs: inputsOf(3),
          writeEpoch: INITIAL_WRITE_EPOCH,
          maxAttempts: 2,
          now: 1_000,
        };
        expect(await fanOuts.seedChunk(seed)).toBe('seeded');
        expect(await fanOuts.seedChunk(seed)).toBe('exists');
        expect(await fanOuts.seedChunk({ ...seed, inputs: inputsOf(3, 1) })).toBe('mismatch');
        expect(await fanOuts.seedChunk({ ...seed, inputs: inputsOf(2) })).toBe('mismatch');
        const items = await fanOuts.items('f1');
        expect(items.map((item) => [item.index, item.input, item.status])).toEqual(
          inputsOf(3).map((input, index) => [index, input, 'pending']),
        );
        expect((await fanOuts.counts('f1')).chunks.open).toBe(1);
      }),
    );

    it(
      'F2: a plan that does not match the stored one fails a fan-out still creating; nothing is dispatchable',
      run(async ({ fanOuts, outbox }) => {
        const plan = planOf('f1');
        const created = await fanOuts.create(plan, leaseOf('a'));
        await seedRange(fanOuts, plan, created.token!, 0, 1, 3);
        const other = await fanOuts.create({ ...plan, chunkSize: 4 }, leaseOf('b', 5_000));
        expect(other.outcome).toBe('mismatch');
        expect(other.mismatch).toContain('chunkSize');
        const row = await fanOuts.get('f1');
        expect(row).toMatchObject({ status: 'failed', creationToken: null });
        expect(row?.error).toContain('chunkSize');
        expect(await fanOuts.dispatch('f1', created.token!, { total: 3, now: 5_000 })).toBe(false);
        expect(await chunkMessages(outbox)).toEqual([]);
        expect((await fanOuts.create(plan, leaseOf('c', 9_000))).outcome).toBe('done');
      }),
    );

    it(
      'F1: dispatch is refused until every chunk is seeded, and writes no message',
      run(async ({ fanOuts, outbox }) => {
        const plan = planOf('f1');
        const { token } = await fanOuts.create(plan, leaseOf('a', 1_000, 60_000));
        await seedRange(fanOuts, plan, token!, 0, 2, 7);
        const error = await rejectionOf(fanOuts.dispatch('f1', token!, { total: 7, now: 1_000 }));
        expect(error).toMatchObject({ name: 'FanOutNotSeededError', code: ErrorCodes.FanOutNotSeeded });
        expect(error.message).toContain('2 of 3 chunks');
        expect(await chunkMessages(outbox)).toEqual([]);
        expect(await fanOuts.placements('f1')).toEqual([]);
        expect((await fanOuts.get('f1'))?.status).toBe('creating');
        await seedRange(fanOuts, plan, token!, 2, 3, 7);
        expect(await fanOuts.dispatch('f1', token!, { total: 7, now: 2_000 })).toBe(true);
        expect(await fanOuts.get('f1')).toMatchObject({
          status: 'dispatched',
          total: 7,
          dispatchedAt: 2_000,
          creationToken: null,
        });
        const messages = await chunkMessages(outbox);
        expect(messages.map((m) => [m.chunkId, m.shard, m.writeEpoch, m.reason])).toEqual([
          [0, 'main', 1, 'dispatch'],
          [1, 'main', 1, 'dispatch'],
          [2, 'main', 1, 'dispatch'],
        ]);
        expect(await fanOuts.dispatch('f1', token!, { total: 7, now: 3_000 })).toBe(false);
        expect(await chunkMessages(outbox)).toHaveLength(3);
      }),
    );

    it(
      'placement: chunks go round-robin over the shards; each message names its shard, store and epoch',
      run(async ({ fanOuts, outbox }) => {
        const plan = planOf('f1', { shards: ['a', 'b'], chunkSize: 2 });
        await createAndDispatch(fanOuts, plan, 9);
        expect(await fanOuts.placements('f1')).toEqual([
          { fanOutId: 'f1', shard: 'a', chunks: 3, writeEpoch: 1, dispatched: 3 },
          { fanOutId: 'f1', shard: 'b', chunks: 2, writeEpoch: 1, dispatched: 2 },
        ]);
        const messages = await chunkMessages(outbox);
        expect(messages.map((m) => `${m.shard}:${m.chunkId}:${m.storeAlias}`).sort()).toEqual([
          'a:0:a',
          'a:2:a',
          'a:4:a',
          'b:1:b',
          'b:3:b',
        ]);
        expect(new Set(messages.map((m) => m.id)).size).toBe(5);
        const topics = (await outbox.list({ limit: 100 })).map(
          (d) => `${d.topic}:${JSON.parse(d.payload).shard}`,
        );
        expect(new Set(topics)).toEqual(new Set(['fanout.chunk.ready.a:a', 'fanout.chunk.ready.b:b']));
        expect((await fanOuts.chunk('f1', 'b', 3))?.firstIndex).toBe(6);
        expect((await fanOuts.chunk('f1', 'a', 4))?.size).toBe(1);
      }),
    );

    it(
      'F1: a dispatch window writes the first chunks; advanceDispatch moves a cursor once from where it is',
      run(async ({ fanOuts, outbox }) => {
        const plan = planOf('f1', { chunkSize: 1 });
        await createAndDispatch(fanOuts, plan, 5, 1_000, 2);
        expect((await chunkMessages(outbox)).map((m) => m.chunkId)).toEqual([0, 1]);
        expect(await fanOuts.advanceDispatch('f1', 'main', 2, 2, 2_000)).toBe(true);
        // A second advancer that read the same cursor writes nothing.
        expect(await fanOuts.advanceDispatch('f1', 'main', 2, 2, 2_000)).toBe(false);
        expect(await fanOuts.advanceDispatch('f1', 'main', 4, 9, 3_000)).toBe(true);
        expect((await chunkMessages(outbox)).map((m) => m.chunkId)).toEqual([0, 1, 2, 3, 4]);
        expect((await fanOuts.placements('f1'))[0]?.dispatched).toBe(5);
        expect(await fanOuts.advanceDispatch('f1', 'nowhere', 0, 1, 3_000)).toBe(false);
      }),
    );

    it(
      'settle and fail end a fan-out once; an empty plan dispatches with no chunks',
      run(async ({ fanOuts, outbox }) => {
        await createAndDispatch(fanOuts, planOf('empty'), 0);
        expect(await chunkMessages(outbox)).toEqual([]);
        expect(await fanOuts.settle('empty', '{"total":0}', 2_000)).toBe(true);
        expect(await fanOuts.settle('empty', '{"total":1}', 3_000)).toBe(false);
        expect(await fanOuts.fail('empty', 'late', 3_000)).toBe(false);
        expect(await fanOuts.get('empty')).toMatchObject({
          status: 'settled',
          summary: '{"total":0}',
          settledAt: 2_000,
        });
        await fanOuts.create(planOf('f2'), leaseOf('a'));
        expect(await fanOuts.settle('f2', '{}', 2_000)).toBe(false);
        expect(await fanOuts.fail('f2', 'cancelled', 2_000)).toBe(true);
        expect(await fanOuts.get('f2')).toMatchObject({ status: 'failed', error: 'cancelled' });
        expect(await fanOuts.get('nothing')).toBeNull();
      }),
    );

    it(
      'L7: a malformed plan, seed or claim is refused naming the field, and nothing is written',
      run(async ({ fanOuts }) => {
        const refusals = [
          fanOuts.create(planOf('f1', { chunkSize: 0 }), leaseOf('a')),
          fanOuts.create(planOf('f1', { shards: ['a', 'a'] }), leaseOf('a')),
          fanOuts.create(planOf('f1'), leaseOf('a', 1_000, 0)),
        ];
        const errors = await Promise.all(refusals.map(rejectionOf));
        expect(errors.map((e) => e.name)).toEqual([
          'InvalidInputError',
          'InvalidInputError',
          'InvalidInputError',
        ]);
        expect(errors[0]?.message).toContain('chunkSize');
        expect(errors[1]?.message).toContain('shards');
        expect(errors[2]?.message).toContain('ttlMs');
        expect(await fanOuts.get('f1')).toBeNull();
        const seed = {
          fanOutId: 'f1',
          shard: 'main',
          chunkId: 0,
          storeAlias: 'main',
          firstIndex: 0,
          inputs: [],
          writeEpoch: 1,
          maxAttempts: 1,
          now: 1_000,
        };
        expect((await rejectionOf(fanOuts.seedChunk(seed))).message).toContain('inputs');
        expect(await fanOuts.chunk('f1', 'main', 0)).toBeNull();
        const claim = {
          fanOutId: 'f1',
          shard: 'main',
          chunkId: 0,
          writeEpoch: 1,
          workerId: '',
          now: 1,
          leaseMs: 1,
        };
        expect((await rejectionOf(fanOuts.claimChunk(claim))).message).toContain('workerId');
      }),
    );
  });
}
