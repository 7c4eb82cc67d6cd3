/**
 * What a resume of a resident body reads (adr/0068, adr/0079): a signal loop whose every
 * signal is sent the moment its execution is reported suspended (as a sender that watches the
 * log, or the resume bench, does) reads no event rows and no snapshot per resume, however long
 * the log, with the cache on; with it off, every resume replays to the same log and result.
 * Counted through store wrappers, not timed.
 */
import {
  defineWorkflow,
  type ExecutionState,
  type RuntimeObserver,
  type SnapshotStore,
  type Stores,
} from '@skein/workflow-runtime';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { ConsumedIndex } from '../src/consumed-index.js';
import { forkState } from '../src/resident-bodies.js';
import { backings, CountingEventStore, harness, types, withEvents } from './support/stores.js';

const ticker = defineWorkflow({
  name: 'ticker',
  input: z.number().int().positive(),
  signals: { tick: z.number() },
  async run(ctx, n) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += await ctx.waitForSignal('tick');
    return sum;
  },
});

/** A snapshot store that delegates to `inner` and counts the snapshot bytes its reads return. */
class CountingSnapshots implements SnapshotStore {
  bytesRead = 0;
  constructor(private readonly inner: SnapshotStore) {}
  put: SnapshotStore['put'] = (snapshot) => this.inner.put(snapshot);
  latest: SnapshotStore['latest'] = async (executionId) => {
    const snapshot = await this.inner.latest(executionId);
    this.bytesRead += snapshot?.state.length ?? 0;
    return snapshot;
  };
  delete: SnapshotStore['delete'] = (executionId) => this.inner.delete(executionId);
}

/** Resolves at the next suspension (or the end) of `id`. */
function watcher(id: string): { observer: RuntimeObserver; next(): Promise<void> } {
  let wake: (() => void) | undefined;
  const observer: RuntimeObserver = {
    executionSuspended: (event) => {
      if (event.executionId === id) wake?.();
    },
    executionSettled: (event) => {
      if (event.executionId === id) wake?.();
    },
  };
  return { observer, next: () => new Promise<void>((resolve) => (wake = resolve)) };
}

const SIGNALS = 150;

describe.each(backings)('what a resume reads (%s store)', (_, open) => {
  const h = harness(open);

  /**
   * Run the loop of `SIGNALS` signals, each sent as the previous suspension is reported; the
   * event rows and snapshot bytes each resume read, and the execution's log and result.
   */
  async function loop(maxResident: number) {
    const { stores } = h.open();
    const events = new CountingEventStore(stores.events);
    const snapshots = new CountingSnapshots(stores.snapshots);
    const counted: Stores = { ...withEvents(stores, events), snapshots };
    const { observer, next } = watcher('t-1');
    const runtime = h.runtime({
      stores: counted,
      workflows: [ticker],
      maintenance: false,
      observers: [observer],
      cache: { maxResident },
      snapshotEvery: 10,
    });
    let suspended = next();
    await runtime.start(ticker, SIGNALS, { executionId: 't-1' });
    await suspended;
    const perResume: { rows: number; bytes: number }[] = [];
    for (let i = 0; i < SIGNALS; i++) {
      const [rows, bytes] = [events.eventsRead, snapshots.bytesRead];
      suspended = next();
      await runtime.signal('t-1', 'tick', 1);
      await suspended;
      perResume.push({ rows: events.eventsRead - rows, bytes: snapshots.bytesRead - bytes });
    }
    const result = await runtime.handle<number>('t-1').result();
    const log = types(await runtime.history('t-1'));
    return { perResume, result, log };
  }

  test('cache on: a resume sent at the suspension reads no event rows and no snapshot, early or late in the log', async () => {
    const { perResume, result } = await loop(1_000);
    expect(result).toBe(SIGNALS);
    const late = perResume.slice(-50);
    expect(late).toEqual(late.map(() => ({ rows: 0, bytes: 0 })));
    const total = (window: typeof perResume) => window.reduce((sum, r) => sum + r.rows + r.bytes, 0);
    expect(total(perResume.slice(-50))).toBeLessThanOrEqual(total(perResume.slice(0, 50)));
    expect(h.backgroundErrors).toEqual([]);
  });

  test('cache off: every resume replays (it reads the log), to the log and result the cache gives', async () => {
    const on = await loop(1_000);
    const off = await loop(0);
    expect(off.result).toBe(SIGNALS);
    expect(off.log).toEqual(on.log);
    expect(off.perResume.every((r) => r.rows + r.bytes > 0)).toBe(true);
    expect(h.backgroundErrors).toEqual([]);
  });
});

describe('ConsumedIndex', () => {
  test('answers as includes does, as the array grows, is forked, or is replaced', () => {
    const index = new ConsumedIndex();
    const state: Pick<ExecutionState, 'consumedSignals'> = {};
    expect(index.has(state.consumedSignals, 'a')).toBe(false);
    const consumed = ['a', 'b'];
    expect(index.has(consumed, 'b')).toBe(true);
    expect(index.has(consumed, 'c')).toBe(false);
    consumed.push('c');
    expect(index.has(consumed, 'c')).toBe(true);
    const fork = [...consumed, 'd'];
    expect(index.has(fork, 'd')).toBe(true);
    expect(index.has(fork, 'a')).toBe(true);
    // Not an extension of what it took in: rebuilt from the array.
    expect(index.has(['x'], 'a')).toBe(false);
    expect(index.has(['x'], 'x')).toBe(true);
    expect(index.has(['y', 'z'], 'x')).toBe(false);
    expect(index.has([], 'y')).toBe(false);
  });
});

describe('forkState', () => {
  test('a fork of a fork shares the records settled for good and copies the rest, holes included', () => {
    const record = (position: number, status: 'completed' | 'started' | 'fired') => ({
      position,
      kind: 'step' as const,
      name: `s${position}`,
      status,
      attempts: 0,
      failures: 0,
    });
    const calls = [record(0, 'completed'), record(1, 'fired'), record(2, 'started'), record(3, 'completed')];
    const state = {
      executionId: 'f-1',
      calls,
      steps: [],
      patches: [],
      timers: [],
    } as unknown as ExecutionState;
    const first = forkState(state);
    expect(first.calls[0]).toBe(calls[0]);
    expect(first.calls[2]).not.toBe(calls[2]);
    expect(first.calls[3]).toBe(calls[3]);
    // The fold settles position 2 in the fork, leaves a hole at 4 and records 5 unsettled.
    first.calls[2] = record(2, 'completed');
    first.calls[5] = record(5, 'started');
    const second = forkState(first);
    expect(second.calls[2]).toBe(first.calls[2]);
    expect(4 in second.calls).toBe(false);
    expect(second.calls[5]).not.toBe(first.calls[5]);
    expect(second.calls[5]).toEqual(first.calls[5]);
    // The hole at 4 is filled later: the next fork still looks at it and past it.
    second.calls[4] = record(4, 'started');
    const third = forkState(second);
    expect(third.calls[4]).not.toBe(second.calls[4]);
    expect(third.calls[5]).not.toBe(second.calls[5]);
    expect(calls[2]!.status).toBe('started');
  });
});
