/**
 * `outboxStoreSuite`: the outbox ledger and delivery queue (docs/architecture.md#outbox). O1:
 * an append's messages commit with its events or not at all; claims carry a token, and only
 * the current token settles; a lapsed claim comes back; a delivery that keeps failing is
 * retired with a diagnostic and stays readable.
 */
import type { OutboxStore, Stores } from '@skein/workflow-runtime';
import { newId } from '@skein/workflow-runtime/internal';
import type { AppendRequest, OutboxMessage } from '@skein/workflow-runtime/spi';
import { describe, expect, it } from 'vitest';
import { draft } from './drafts.js';
import { rejectionOf, type StoresWith, withStores } from './harness.js';
import { outboxHeaderCases } from './outbox-header-cases.js';
import { outboxPruneCases } from './outbox-prune-cases.js';

/** Options of {@link outboxStoreSuite}: `open` returns stores with an outbox. */
export interface OutboxStoreSuiteOptions {
  name: string;
  open: () =>
    | (StoresWith<'events'> & { outbox: OutboxStore })
    | Promise<StoresWith<'events'> & { outbox: OutboxStore }>;
}

/** A message of `topic` about `key`, written at `createdAt`. */
function message(topic: string, key: string, createdAt = 1_000, availableAt?: number): OutboxMessage {
  const m: OutboxMessage = { id: newId(), topic, key, payload: JSON.stringify({ key }), createdAt };
  if (availableAt !== undefined) m.availableAt = availableAt;
  return m;
}

/** Seq 0 of `executionId` with `outbox` attached. */
function startWith(executionId: string, outbox: OutboxMessage[]): AppendRequest {
  return {
    executionId,
    workflow: 'wf',
    expectedSeq: 0,
    fence: 0,
    events: [draft('EXECUTION_STARTED')],
    outbox,
  };
}

const claimOf = (now: number, limit = 10, leaseMs = 1_000) => ({ now, limit, leaseMs });

/**
 * Register the outbox-store conformance tests in the current vitest file.
 * @example
 * outboxStoreSuite({ name: 'memory', open: () => openMemoryStores() });
 */
export function outboxStoreSuite({ name, open }: OutboxStoreSuiteOptions): void {
  type S = Pick<Stores, 'events' | 'close'> & { outbox: OutboxStore };
  const run = (body: (stores: S) => Promise<void>) => () => withStores(open, body);

  describe(`${name}: outbox store`, () => {
    it(
      'O1: an append writes its messages with its events; they are pending and readable',
      run(async ({ events, outbox }) => {
        const m = message('execution.pending', 'x1');
        await events.append(startWith('x1', [m]));
        expect(await events.read('x1')).toHaveLength(1);
        expect(await outbox.get(m.id)).toMatchObject({
          id: m.id,
          topic: 'execution.pending',
          key: 'x1',
          payload: m.payload,
          status: 'pending',
          attempts: 0,
          availableAt: 1_000,
          claimToken: null,
        });
      }),
    );

    it(
      'O1: a refused append writes none of its messages (taken seq 0, stale fence)',
      run(async ({ events, outbox }) => {
        await events.append(startWith('x1', [message('t', 'x1')]));
        const lost = message('t', 'again');
        expect((await rejectionOf(events.append(startWith('x1', [lost])))).name).toBe(
          'ExecutionAlreadyExistsError',
        );
        const fence = await events.acquireFence('x1');
        await events.acquireFence('x1');
        const stale = message('t', 'stale');
        const append = {
          executionId: 'x1',
          workflow: 'wf',
          expectedSeq: 1,
          fence,
          events: [draft('STEP_STARTED')],
          outbox: [stale],
        };
        expect((await rejectionOf(events.append(append))).name).toBe('StaleFenceError');
        expect(await outbox.get(lost.id)).toBeNull();
        expect(await outbox.get(stale.id)).toBeNull();
        expect(await outbox.list()).toHaveLength(1);
      }),
    );

    it(
      'O1: an append reusing a message id is refused whole: no events, no messages',
      run(async ({ events, outbox }) => {
        const m = message('t', 'x1');
        await events.append(startWith('x1', [m]));
        const fresh = message('t', 'x2');
        const error = await rejectionOf(events.append(startWith('x2', [fresh, { ...m, key: 'x2' }])));
        expect(error.name).toBe('InvalidAppendError');
        expect(error.message).toContain(m.id);
        expect(await events.read('x2')).toEqual([]);
        expect(await events.getExecution('x2')).toBeNull();
        expect(await outbox.get(fresh.id)).toBeNull();
        expect((await outbox.get(m.id))?.key).toBe('x1');
      }),
    );

    it(
      'L7: malformed messages are refused naming the field, and nothing is written',
      run(async ({ events, outbox }) => {
        const bad = { ...message('', 'x1') };
        const error = await rejectionOf(events.append(startWith('x1', [bad])));
        expect(error.name).toBe('InvalidAppendError');
        expect(error.message).toContain('topic');
        expect(await events.getExecution('x1')).toBeNull();
        const twice = message('t', 'k');
        const refused = await rejectionOf(outbox.write([twice, twice]));
        expect(refused.name).toBe('InvalidInputError');
        expect(refused.message).toContain('appears twice');
        expect(await outbox.list()).toEqual([]);
      }),
    );

    it(
      'write stores messages without an append; claim returns them oldest available first, each with one token',
      run(async ({ outbox }) => {
        const late = message('t', 'late', 1_000, 3_000);
        const early = message('t', 'early', 1_000, 1_000);
        const middle = message('t', 'middle', 1_000, 2_000);
        await outbox.write([late, early, middle]);
        expect(await outbox.claim(claimOf(999))).toEqual([]);
        const claimed = await outbox.claim(claimOf(2_500));
        expect(claimed.map((d) => d.key)).toEqual(['early', 'middle']);
        expect(new Set(claimed.map((d) => d.claimToken)).size).toBe(1);
        expect(claimed[0]).toMatchObject({ attempts: 1, status: 'pending', availableAt: 3_500 });
        expect((await outbox.claim(claimOf(3_000))).map((d) => d.key)).toEqual(['late']);
      }),
    );

    it(
      'claim honours limit and topics',
      run(async ({ outbox }) => {
        await outbox.write([message('a', '1'), message('b', '2'), message('a', '3'), message('c', '4')]);
        expect((await outbox.claim({ ...claimOf(1_000, 1), topics: ['a'] })).map((d) => d.key)).toEqual([
          '1',
        ]);
        expect((await outbox.claim({ ...claimOf(1_000), topics: ['a', 'c'] })).map((d) => d.key)).toEqual([
          '3',
          '4',
        ]);
        expect((await outbox.claim(claimOf(1_000))).map((d) => d.key)).toEqual(['2']);
      }),
    );

    it(
      'only the current token marks published, reschedules, retires or renews',
      run(async ({ outbox }) => {
        const m = message('t', 'k');
        await outbox.write([m]);
        const [first] = await outbox.claim(claimOf(1_000));
        expect(await outbox.markPublished(m.id, 'not-the-token', 1_100)).toBe(false);
        expect(await outbox.retire(m.id, 'not-the-token', 'no', 1_100)).toBe(false);
        expect(await outbox.renew(m.id, 'not-the-token', 1_100, 1_000)).toBe(false);
        expect(
          await outbox.reschedule(m.id, 'not-the-token', { availableAt: 0, error: 'x', now: 1_100 }),
        ).toBe('lost');
        expect((await outbox.get(m.id))?.status).toBe('pending');
        expect(await outbox.markPublished(m.id, first!.claimToken, 1_200)).toBe(true);
        expect(await outbox.get(m.id)).toMatchObject({
          status: 'published',
          settledAt: 1_200,
          claimToken: null,
        });
        expect(await outbox.markPublished(m.id, first!.claimToken, 1_300)).toBe(false);
        expect(await outbox.claim(claimOf(10_000))).toEqual([]);
      }),
    );

    it(
      'markPublishedAll marks each delivery its token holds, and only those',
      run(async ({ outbox }) => {
        const messages = [message('t', 'a'), message('t', 'b'), message('t', 'c')];
        await outbox.write(messages);
        const claimed = await outbox.claim(claimOf(1_000));
        const claims = claimed.map((d) => ({ id: d.id, token: d.claimToken }));
        claims[1] = { id: claims[1]!.id, token: 'stale' };
        expect(await outbox.markPublishedAll(claims, 1_100)).toEqual([true, false, true]);
        expect((await outbox.list({ status: 'published' })).map((d) => d.key).sort()).toEqual(['a', 'c']);
        expect(await outbox.markPublishedAll([], 1_200)).toEqual([]);
      }),
    );

    it(
      'markPublishedAll under one lapsed token settles only the deliveries that token still holds',
      run(async ({ outbox }) => {
        await outbox.write([message('t', 'a'), message('t', 'b', 1_001), message('t', 'c', 1_002)]);
        const first = await outbox.claim(claimOf(1_010));
        expect(first.map((d) => d.key)).toEqual(['a', 'b', 'c']);
        // The claim lapses; another claimer takes the two oldest under a token of its own.
        const second = await outbox.claim(claimOf(2_100, 2));
        expect(second.map((d) => d.key)).toEqual(['a', 'b']);
        const stale = first.map((d) => ({ id: d.id, token: d.claimToken }));
        expect(await outbox.markPublishedAll(stale, 2_200)).toEqual([false, false, true]);
        expect((await outbox.list({ status: 'published' })).map((d) => d.key)).toEqual(['c']);
        const current = second.map((d) => ({ id: d.id, token: d.claimToken }));
        expect(await outbox.markPublishedAll(current, 2_300)).toEqual([true, true]);
        expect(await outbox.list({ status: 'pending' })).toEqual([]);
      }),
    );

    it(
      "a crashed claimer's claim comes back when the window passes; the old token is then powerless",
      run(async ({ outbox }) => {
        const m = message('t', 'k');
        await outbox.write([m]);
        const [first] = await outbox.claim(claimOf(1_000, 10, 500));
        expect(await outbox.claim(claimOf(1_499))).toEqual([]);
        const [second] = await outbox.claim(claimOf(1_500));
        expect(second).toMatchObject({ id: m.id, attempts: 2 });
        expect(second!.claimToken).not.toBe(first!.claimToken);
        expect(await outbox.markPublished(m.id, first!.claimToken, 1_600)).toBe(false);
        expect(await outbox.markPublished(m.id, second!.claimToken, 1_600)).toBe(true);
      }),
    );

    it(
      'renew keeps a claim while its claimer works',
      run(async ({ outbox }) => {
        const m = message('t', 'k');
        await outbox.write([m]);
        const [claimed] = await outbox.claim(claimOf(1_000, 10, 500));
        expect(await outbox.renew(m.id, claimed!.claimToken, 1_400, 500)).toBe(true);
        expect(await outbox.claim(claimOf(1_700))).toEqual([]);
        expect((await outbox.claim(claimOf(1_900))).map((d) => d.id)).toEqual([m.id]);
      }),
    );

    it(
      'reschedule gives the delivery back at availableAt with its error, which the next claim hands out',
      run(async ({ outbox }) => {
        const m = message('t', 'k');
        await outbox.write([m]);
        const [claimed] = await outbox.claim(claimOf(1_000));
        const outcome = await outbox.reschedule(m.id, claimed!.claimToken, {
          availableAt: 5_000,
          error: 'broker returned it',
          now: 1_100,
        });
        expect(outcome).toBe('rescheduled');
        expect(await outbox.get(m.id)).toMatchObject({
          status: 'pending',
          availableAt: 5_000,
          lastError: 'broker returned it',
          claimToken: null,
        });
        expect(await outbox.claim(claimOf(4_999))).toEqual([]);
        const again = await outbox.claim(claimOf(5_000));
        expect(again).toEqual([
          {
            ...m,
            status: 'pending',
            availableAt: 6_000,
            attempts: 2,
            claimToken: again[0]!.claimToken,
            lastError: 'broker returned it',
            settledAt: null,
          },
        ]);
        expect(again[0]!.claimToken).not.toBe(claimed!.claimToken);
      }),
    );

    it(
      'a delivery failing maxDeliveryAttempts times is retired with a diagnostic and stays readable',
      run(async ({ outbox }) => {
        const m = message('t', 'k');
        await outbox.write([m]);
        let now = 1_000;
        const outcomes: string[] = [];
        for (let i = 0; i < 3; i++) {
          const [claimed] = await outbox.claim({ ...claimOf(now), maxDeliveryAttempts: 3 });
          const options = { availableAt: now + 10, error: `nack ${i + 1}`, now, maxDeliveryAttempts: 3 };
          outcomes.push(await outbox.reschedule(m.id, claimed!.claimToken, options));
          now += 10;
        }
        expect(outcomes).toEqual(['rescheduled', 'rescheduled', 'retired']);
        const retired = await outbox.get(m.id);
        expect(retired).toMatchObject({ status: 'retired', attempts: 3, settledAt: 1_020 });
        expect(retired?.lastError).toContain('nack 3');
        expect(retired?.lastError).toContain('3 failed attempts');
        expect(await outbox.claim(claimOf(100_000))).toEqual([]);
        expect((await outbox.list({ status: 'retired' })).map((d) => d.id)).toEqual([m.id]);
      }),
    );

    it(
      'a delivery claimed maxDeliveryAttempts times without settling is retired at the next claim',
      run(async ({ outbox }) => {
        const m = message('t', 'k');
        await outbox.write([m]);
        for (let now = 1_000; now < 1_200; now += 100) {
          expect(await outbox.claim({ ...claimOf(now, 10, 100), maxDeliveryAttempts: 2 })).toHaveLength(1);
        }
        expect(await outbox.claim({ ...claimOf(1_200, 10, 100), maxDeliveryAttempts: 2 })).toEqual([]);
        const retired = await outbox.get(m.id);
        expect(retired).toMatchObject({ status: 'retired', attempts: 2 });
        expect(retired?.lastError).toContain('never settled');
      }),
    );

    it(
      'retire ends a delivery with the reason given',
      run(async ({ outbox }) => {
        const m = message('t', 'k');
        await outbox.write([m]);
        const [claimed] = await outbox.claim(claimOf(1_000));
        expect(await outbox.retire(m.id, claimed!.claimToken, 'poison: bad payload', 1_001)).toBe(true);
        expect(await outbox.get(m.id)).toMatchObject({
          status: 'retired',
          lastError: 'poison: bad payload',
          settledAt: 1_001,
        });
      }),
    );

    it(
      'of 8 concurrent claims over 40 deliveries, each delivery goes to exactly one claimer',
      run(async ({ outbox }) => {
        const messages = Array.from({ length: 40 }, (_, i) => message('t', `k${i}`));
        await outbox.write(messages);
        const claims = await Promise.all(Array.from({ length: 8 }, () => outbox.claim(claimOf(1_000, 7))));
        const ids = claims.flat().map((d) => d.id);
        expect(new Set(ids).size).toBe(ids.length);
        const rest = await outbox.claim(claimOf(1_000, 100));
        expect(ids.length + rest.length).toBe(40);
      }),
    );

    it(
      'list pages by message id and filters by status',
      run(async ({ outbox }) => {
        const messages = Array.from({ length: 5 }, (_, i) => message('t', `k${i}`));
        await outbox.write(messages);
        const [claimed] = await outbox.claim(claimOf(1_000, 1));
        await outbox.markPublished(claimed!.id, claimed!.claimToken, 1_001);
        const ids = messages.map((m) => m.id).sort();
        expect((await outbox.list({ limit: 2 })).map((d) => d.id)).toEqual(ids.slice(0, 2));
        expect((await outbox.list({ after: ids[2]! })).map((d) => d.id)).toEqual(ids.slice(3));
        expect((await outbox.list({ status: 'published' })).map((d) => d.id)).toEqual([claimed!.id]);
        expect(await outbox.list({ status: 'pending' })).toHaveLength(4);
      }),
    );

    it(
      'list by status pages each status by message id: pending ones whatever their availability, claims among them',
      run(async ({ outbox }) => {
        // Ids ascend while availability descends: the order of availability is the ids' reversed.
        const messages = Array.from({ length: 8 }, (_, i) => message('t', `k${i}`, 1_000, 2_000 - i * 100));
        await outbox.write(messages);
        const ids = messages.map((m) => m.id).sort();
        const byId = (deliveries: readonly { id: string }[]) => deliveries.map((d) => d.id);
        const settled = await outbox.claim(claimOf(2_000, 3)); // the three available first
        await outbox.markPublishedAll(
          settled.slice(0, 2).map((d) => ({ id: d.id, token: d.claimToken })),
          2_001,
        );
        expect(await outbox.retire(settled[2]!.id, settled[2]!.claimToken, 'by hand', 2_002)).toBe(true);
        const [claimed] = await outbox.claim({ ...claimOf(2_003, 1), leaseMs: 5_000 });
        const pending = ids.filter((id) => !settled.some((d) => d.id === id));
        expect(byId(await outbox.list({ status: 'pending', limit: 3 }))).toEqual(pending.slice(0, 3));
        expect(byId(await outbox.list({ status: 'pending', after: pending[2]! }))).toEqual(pending.slice(3));
        const listedClaim = (await outbox.list({ status: 'pending' })).find((d) => d.id === claimed!.id);
        expect(listedClaim).toEqual(await outbox.get(claimed!.id));
        expect(listedClaim).toMatchObject({
          claimToken: claimed!.claimToken,
          availableAt: 7_003,
          attempts: 1,
        });
        const published = byId(settled.slice(0, 2)).sort();
        expect(byId(await outbox.list({ status: 'published' }))).toEqual(published);
        expect(byId(await outbox.list({ status: 'published', after: published[0]! }))).toEqual([
          published[1],
        ]);
        expect(byId(await outbox.list({ status: 'retired' }))).toEqual([settled[2]!.id]);
        expect(byId(await outbox.list())).toEqual(ids);
      }),
    );

    it(
      'list refuses a status, a cursor or a limit it cannot honour, naming the field',
      run(async ({ outbox }) => {
        await outbox.write([message('t', 'k')]);
        const queries: [unknown, string][] = [
          [{ status: 'sent' }, 'status'],
          [{ limit: 0 }, 'limit'],
          [{ limit: 2.5 }, 'limit'],
          [{ after: 7 }, 'after'],
        ];
        for (const [query, field] of queries) {
          const refused = await rejectionOf(outbox.list(query as Parameters<OutboxStore['list']>[0]));
          expect(refused.name).toBe('InvalidInputError');
          expect(refused.message).toContain(field);
        }
        expect(await outbox.list()).toHaveLength(1);
      }),
    );

    outboxPruneCases(run);
    outboxHeaderCases(run);
  });
}
