/** `signalStoreSuite`: the signal inbox keeps signals per execution, in send order, once per id. */
import type { Signal } from '@skein/workflow-runtime';
import { describe, expect, it } from 'vitest';
import { type SuiteOptions, withStores } from './harness.js';

/** Options of {@link signalStoreSuite}. */
export type SignalStoreSuiteOptions = SuiteOptions<'signals'>;

function signal(signalId: string, executionId: string, name = 'approve', sentAt = 1): Signal {
  return { signalId, executionId, name, payload: JSON.stringify({ id: signalId }), sentAt };
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
        for (const item of sent) await signals.send(item);
        expect(await signals.pending('e')).toEqual([sent[0], sent[2], sent[3]]);
        expect(await signals.pending('other')).toEqual([sent[1]]);
        expect(await signals.pending('none')).toEqual([]);
      }));

    it('sending a signal id again is a no-op: the first send stands and keeps its place', () =>
      withStores(open, async ({ signals }) => {
        await signals.send(signal('first', 'e'));
        await signals.send(signal('second', 'e'));
        await signals.send({ ...signal('first', 'e', 'changed', 99), payload: '"changed"' });
        expect(await signals.pending('e')).toEqual([signal('first', 'e'), signal('second', 'e')]);
      }));

    it('complete deletes one signal and ignores an unknown id', () =>
      withStores(open, async ({ signals }) => {
        await signals.send(signal('a', 'e'));
        await signals.send(signal('b', 'e'));
        await signals.complete('a');
        await signals.complete('never-sent');
        expect(await signals.pending('e')).toEqual([signal('b', 'e')]);
        await signals.complete('b');
        expect(await signals.pending('e')).toEqual([]);
      }));

    it('concurrent sends to one execution all land, each once', () =>
      withStores(open, async ({ signals }) => {
        const ids = Array.from({ length: 40 }, (_, i) => `c-${String(i).padStart(2, '0')}`);
        await Promise.all([...ids, ...ids].map((id) => signals.send(signal(id, 'e'))));
        const pending = await signals.pending('e');
        expect(pending.map((item) => item.signalId).sort()).toEqual(ids);
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
