/**
 * `signalStoreSuite`: the signal inbox keeps signals per execution, in send order, once per
 * (execution, signal id); reads are filtered and bounded; the inbox of an execution is bounded.
 */
import { InvalidInputError } from '@skein/workflow-runtime';
import { DEFAULT_PENDING_LIMIT, type Signal } from '@skein/workflow-runtime/spi';
import { describe, expect, it } from 'vitest';
import { rejectionOf, type SuiteOptions, withStores } from './harness.js';

/** Options of {@link signalStoreSuite}. */
export type SignalStoreSuiteOptions = SuiteOptions<'signals'>;

function signal(signalId: string, executionId: string, name = 'approve', sentAt = 1): Signal {
  return { signalId, executionId, name, payload: JSON.stringify({ id: signalId }), sentAt };
}

function idsOf(signals: readonly Signal[]): string[] {
  return signals.map((item) => item.signalId);
}

/**
 * Register the signal-store conformance tests in the current vitest file.
 * @example
 * signalStoreSuite({ name: 'memory', open: () => openMemoryStores() });
 */
export function signalStoreSuite({ name, open }: SignalStoreSuiteOptions): void {
  describe(`${name}: signal store`, () => {
    it('pending returns one execution’s signals oldest (first sent) first, whatever their ids', () =>
      withStores(open, async ({ signals }) => {
        // Ids sort the other way round from send order: the order must be the send order.
        const sent = [
          signal('s-c', 'e'),
          signal('s-x', 'other'),
          signal('s-b', 'e', 'reject'),
          signal('s-a', 'e'),
        ];
        for (const item of sent) expect(await signals.send(item)).toBe('sent');
        expect(await signals.pending('e')).toEqual([sent[0], sent[2], sent[3]]);
        expect(await signals.pending('other')).toEqual([sent[1]]);
        expect(await signals.pending('none')).toEqual([]);
      }));

    it('signal ids are scoped to their execution: one id sent to two executions is two signals', () =>
      withStores(open, async ({ signals }) => {
        expect(await signals.send(signal('same', 'a'))).toBe('sent');
        expect(await signals.send(signal('same', 'b'))).toBe('sent');
        expect(await signals.pending('a')).toEqual([signal('same', 'a')]);
        expect(await signals.pending('b')).toEqual([signal('same', 'b')]);
        await signals.complete('a', 'same');
        expect(await signals.pending('a')).toEqual([]);
        expect(await signals.pending('b')).toEqual([signal('same', 'b')]);
        await signals.clear('a');
        expect(await signals.pending('b')).toEqual([signal('same', 'b')]);
        expect(await signals.send(signal('same', 'b'))).toBe('duplicate');
      }));

    it('sending an id again to its execution is a duplicate: the first send stands and keeps its place', () =>
      withStores(open, async ({ signals }) => {
        await signals.send(signal('first', 'e'));
        await signals.send(signal('second', 'e'));
        const again = { ...signal('first', 'e', 'changed', 99), payload: '"changed"' };
        expect(await signals.send(again)).toBe('duplicate');
        expect(await signals.pending('e')).toEqual([signal('first', 'e'), signal('second', 'e')]);
      }));

    it('complete marks one signal consumed: it leaves pending, its id stays taken, unknown ids are ignored', () =>
      withStores(open, async ({ signals }) => {
        await signals.send(signal('a', 'e'));
        await signals.send(signal('b', 'e'));
        await signals.complete('e', 'a');
        await signals.complete('e', 'never-sent');
        await signals.complete('other', 'b');
        expect(await signals.pending('e')).toEqual([signal('b', 'e')]);
        expect(await signals.send(signal('a', 'e', 'approve', 5))).toBe('duplicate');
        expect(await signals.pending('e')).toEqual([signal('b', 'e')]);
        await signals.complete('e', 'b');
        await signals.complete('e', 'b');
        expect(await signals.pending('e')).toEqual([]);
      }));

    it('clear deletes an execution’s signals, waiting and completed, and no other’s; its ids are free again', () =>
      withStores(open, async ({ signals }) => {
        await signals.send(signal('a', 'e'));
        await signals.send(signal('b', 'e'));
        await signals.send(signal('c', 'kept'));
        await signals.complete('e', 'a');
        await signals.clear('e');
        await signals.clear('never-signalled');
        expect(await signals.pending('e')).toEqual([]);
        expect(await signals.pending('kept')).toEqual([signal('c', 'kept')]);
        expect(await signals.send(signal('a', 'e'))).toBe('sent');
        expect(await signals.pending('e')).toEqual([signal('a', 'e')]);
      }));

    it('pending filters by name, pages after a signal, and returns at most limit, oldest first', () =>
      withStores(open, async ({ signals }) => {
        const sent = [
          signal('1', 'e', 'a'),
          signal('2', 'e', 'b'),
          signal('3', 'e', 'c'),
          signal('4', 'e', 'a'),
          signal('5', 'e', 'c'),
          signal('6', 'e', 'b'),
          signal('7', 'other', 'a'),
        ];
        for (const item of sent) await signals.send(item);
        expect(idsOf(await signals.pending('e', { names: ['a'] }))).toEqual(['1', '4']);
        expect(idsOf(await signals.pending('e', { names: ['c', 'a'] }))).toEqual(['1', '3', '4', '5']);
        expect(idsOf(await signals.pending('e', { names: ['c', 'a'], limit: 3 }))).toEqual(['1', '3', '4']);
        expect(idsOf(await signals.pending('e', { names: ['a', 'c'], after: '3', limit: 1 }))).toEqual(['4']);
        expect(idsOf(await signals.pending('e', { after: '4' }))).toEqual(['5', '6']);
        expect(idsOf(await signals.pending('e', { names: ['b'], after: '1' }))).toEqual(['2', '6']);
        expect(idsOf(await signals.pending('e', { limit: 2 }))).toEqual(['1', '2']);
        expect(await signals.pending('e', { names: [] })).toEqual([]);
        expect(await signals.pending('e', { names: ['none'] })).toEqual([]);
        // A cursor the execution does not have gives nothing, not the whole inbox.
        expect(await signals.pending('e', { after: '7' })).toEqual([]);
        expect(await signals.pending('e', { after: 'never-sent' })).toEqual([]);
        // A completed signal still marks its place.
        await signals.complete('e', '3');
        expect(idsOf(await signals.pending('e', { names: ['c', 'a'], after: '3' }))).toEqual(['4', '5']);
        expect(await signals.pending('e', { names: ['a'] })).toEqual([sent[0], sent[3]]);
      }));

    it('names with quotes, braces, commas and inherited-property names filter exactly', () =>
      withStores(open, async ({ signals }) => {
        const names = ['__proto__', 'constructor', '{a,b}', 'q"uote\\', "it's", 'NULL', ''];
        for (const [i, item] of names.entries()) await signals.send(signal(`n${i}`, 'e', item));
        for (const [i, item] of names.entries())
          expect(idsOf(await signals.pending('e', { names: [item] })), item).toEqual([`n${i}`]);
        expect(idsOf(await signals.pending('e', { names: ['{a,b}', '__proto__', 'x'] }))).toEqual([
          'n0',
          'n2',
        ]);
      }));

    it(`pending without a limit returns at most ${DEFAULT_PENDING_LIMIT} signals`, () =>
      withStores(open, async ({ signals }) => {
        const ids = Array.from(
          { length: DEFAULT_PENDING_LIMIT + 5 },
          (_, i) => `s-${String(i).padStart(3, '0')}`,
        );
        for (const id of ids) await signals.send(signal(id, 'e'));
        expect(idsOf(await signals.pending('e'))).toEqual(ids.slice(0, DEFAULT_PENDING_LIMIT));
        expect(idsOf(await signals.pending('e', { after: ids[DEFAULT_PENDING_LIMIT - 1]! }))).toEqual(
          ids.slice(DEFAULT_PENDING_LIMIT),
        );
      }));

    it('a limit or maxPending that is not an integer >= 1 is refused with InvalidInputError, and nothing is written', () =>
      withStores(open, async ({ signals }) => {
        for (const limit of [0, -1, 1.5, Number.NaN]) {
          const error = await rejectionOf(signals.pending('e', { limit }));
          expect(error).toBeInstanceOf(InvalidInputError);
          expect(error.message).toContain('query.limit');
        }
        for (const maxPending of [0, -3, 2.5, Number.POSITIVE_INFINITY]) {
          const error = await rejectionOf(signals.send(signal('s', 'e'), { maxPending }));
          expect(error).toBeInstanceOf(InvalidInputError);
          expect(error.message).toContain('options.maxPending');
        }
        expect(await signals.pending('e')).toEqual([]);
      }));

    it('the inbox is bounded: past maxPending waiting signals a send is inbox-full and writes nothing', () =>
      withStores(open, async ({ signals }) => {
        const bound = { maxPending: 3 };
        for (const id of ['a', 'b', 'c']) expect(await signals.send(signal(id, 'e'), bound)).toBe('sent');
        expect(await signals.send(signal('d', 'e'), bound)).toBe('inbox-full');
        // A duplicate at the bound is still a duplicate; another execution has its own bound.
        expect(await signals.send(signal('a', 'e'), bound)).toBe('duplicate');
        expect(await signals.send(signal('d', 'other'), bound)).toBe('sent');
        expect(idsOf(await signals.pending('e'))).toEqual(['a', 'b', 'c']);
        // Consumed signals do not count: completing one makes room for one.
        await signals.complete('e', 'b');
        expect(await signals.send(signal('d', 'e'), bound)).toBe('sent');
        expect(await signals.send(signal('e', 'e'), bound)).toBe('inbox-full');
        expect(idsOf(await signals.pending('e'))).toEqual(['a', 'c', 'd']);
      }));

    it('the bound holds under concurrent senders: of 30 concurrent sends with maxPending 10 exactly 10 land', () =>
      withStores(open, async ({ signals }) => {
        const ids = Array.from({ length: 30 }, (_, i) => `r-${String(i).padStart(2, '0')}`);
        const outcomes = await Promise.all(
          ids.map((id) => signals.send(signal(id, 'e'), { maxPending: 10 })),
        );
        expect(outcomes.filter((outcome) => outcome === 'sent')).toHaveLength(10);
        expect(outcomes.filter((outcome) => outcome === 'inbox-full')).toHaveLength(20);
        const landed = idsOf(await signals.pending('e'));
        expect(landed.sort()).toEqual(ids.filter((_, i) => outcomes[i] === 'sent'));
      }));

    it('concurrent sends to one execution all land, each once, and every resend says duplicate', () =>
      withStores(open, async ({ signals }) => {
        const ids = Array.from({ length: 40 }, (_, i) => `c-${String(i).padStart(2, '0')}`);
        const outcomes = await Promise.all([...ids, ...ids].map((id) => signals.send(signal(id, 'e'))));
        expect(outcomes.filter((outcome) => outcome === 'sent')).toHaveLength(40);
        expect(outcomes.filter((outcome) => outcome === 'duplicate')).toHaveLength(40);
        const pending = await signals.pending('e');
        expect(idsOf(pending).sort()).toEqual(ids);
      }));

    it('the payload text comes back byte for byte', () =>
      withStores(open, async ({ signals }) => {
        const payload = '{"t":"ünïcödé ✓","n":[1,2.5,null],"s":"\\u0000"}';
        await signals.send({ ...signal('p', 'e'), payload, sentAt: 1_750_000_000_123 });
        expect(await signals.pending('e')).toEqual([
          { ...signal('p', 'e'), payload, sentAt: 1_750_000_000_123 },
        ]);
      }));
  });
}
