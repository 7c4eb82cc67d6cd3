/** `timerStoreSuite`: durable timers are claimed oldest first, exactly once, until the claim lapses. */
import type { TimerStore } from '@skein/workflow-runtime';
import type { Timer } from '@skein/workflow-runtime/spi';
import { describe, expect, it } from 'vitest';
import { start } from './drafts.js';
import { type SuiteOptions, withStores } from './harness.js';

/** Options of {@link timerStoreSuite} (the event store gives the timers' executions their workflows). */
export type TimerStoreSuiteOptions = SuiteOptions<'timers' | 'events'>;

const TTL = 1000;

function timer(timerId: string, dueAt: number, executionId = 'e'): Timer {
  return { timerId, executionId, dueAt };
}

async function scheduleAll(timers: TimerStore, list: Timer[]): Promise<void> {
  for (const item of list) await timers.schedule(item);
}

/**
 * Register the timer-store conformance tests in the current vitest file.
 * @example
 * timerStoreSuite({ name: 'memory', open: () => openMemoryStores() });
 */
export function timerStoreSuite({ name, open }: TimerStoreSuiteOptions): void {
  describe(`${name}: timer store`, () => {
    it('claimDue returns due timers oldest first, at most limit, and never a timer not yet due', () =>
      withStores(open, async ({ timers }) => {
        await scheduleAll(timers, [timer('t3', 300), timer('t1', 100), timer('t4', 1000), timer('t2', 200)]);
        const first = await timers.claimDue({ now: 500, limit: 2, owner: 'a', claimTtlMs: TTL });
        expect(first).toEqual([timer('t1', 100), timer('t2', 200)]);
        const rest = await timers.claimDue({ now: 500, limit: 10, owner: 'a', claimTtlMs: TTL });
        expect(rest).toEqual([timer('t3', 300)]);
        expect(await timers.claimDue({ now: 999, limit: 10, owner: 'b', claimTtlMs: TTL })).toEqual([]);
      }));

    it('a due timer is claimed exactly once under many concurrent claimers', () =>
      withStores(open, async ({ timers }) => {
        const due = Array.from({ length: 30 }, (_, i) => timer(`due-${String(i).padStart(2, '0')}`, i));
        await scheduleAll(timers, due);
        const claimers = Array.from({ length: 8 }, (_, i) =>
          timers.claimDue({ now: 100, limit: 5, owner: `claimer-${i}`, claimTtlMs: TTL }),
        );
        const singles = due.map((item, i) =>
          timers.claim(item.timerId, { now: 100, owner: `single-${i}`, claimTtlMs: TTL }),
        );
        const [batches, single] = await Promise.all([Promise.all(claimers), Promise.all(singles)]);
        const claimed = [
          ...batches.flat().map((item) => item.timerId),
          ...due.filter((_, i) => single[i]).map((t) => t.timerId),
        ];
        expect(claimed.sort()).toEqual(due.map((item) => item.timerId));
      }));

    it('a claim lapses after claimTtlMs and the timer can be claimed again', () =>
      withStores(open, async ({ timers }) => {
        await timers.schedule(timer('t', 100));
        expect(await timers.claim('t', { now: 100, owner: 'a', claimTtlMs: TTL })).toBe(true);
        expect(await timers.claim('t', { now: 100 + TTL - 1, owner: 'b', claimTtlMs: TTL })).toBe(false);
        expect(await timers.claimDue({ now: 100 + TTL - 1, limit: 10, owner: 'b', claimTtlMs: TTL })).toEqual(
          [],
        );
        expect(await timers.claimDue({ now: 100 + TTL, limit: 10, owner: 'b', claimTtlMs: TTL })).toEqual([
          timer('t', 100),
        ]);
        expect(await timers.claim('t', { now: 100 + 2 * TTL, owner: 'c', claimTtlMs: TTL })).toBe(true);
      }));

    it('claimDue with workflows claims only timers of executions of those workflows; the rest stay due', () =>
      withStores(open, async ({ timers, events }) => {
        await start(events, 'of-a', { workflow: 'alpha' });
        await start(events, 'of-b', { workflow: 'beta' });
        await scheduleAll(timers, [
          timer('ta', 10, 'of-a'),
          timer('tb', 20, 'of-b'),
          timer('tn', 5, 'never-started'),
        ]);
        const claim = { now: 100, limit: 10, claimTtlMs: TTL };
        expect(await timers.claimDue({ ...claim, owner: 'x', workflows: [] })).toEqual([]);
        expect(await timers.claimDue({ ...claim, owner: 'x', workflows: ['beta', 'gamma'] })).toEqual([
          timer('tb', 20, 'of-b'),
        ]);
        // The others were not claimed: another claimer gets them at once.
        expect(await timers.claimDue({ ...claim, owner: 'y', workflows: ['alpha'] })).toEqual([
          timer('ta', 10, 'of-a'),
        ]);
        expect(await timers.claimDue({ ...claim, owner: 'z' })).toEqual([timer('tn', 5, 'never-started')]);
      }));

    it('claim refuses a timer that is not due or does not exist', () =>
      withStores(open, async ({ timers }) => {
        await timers.schedule(timer('later', 500));
        expect(await timers.claim('later', { now: 499, owner: 'a', claimTtlMs: TTL })).toBe(false);
        expect(await timers.claim('missing', { now: 499, owner: 'a', claimTtlMs: TTL })).toBe(false);
        expect(await timers.claim('later', { now: 500, owner: 'a', claimTtlMs: TTL })).toBe(true);
      }));

    it('complete removes the timer', () =>
      withStores(open, async ({ timers }) => {
        await scheduleAll(timers, [timer('t1', 1), timer('t2', 2)]);
        await timers.claimDue({ now: 10, limit: 1, owner: 'a', claimTtlMs: TTL });
        await timers.complete('t1');
        await timers.complete('never-scheduled');
        expect(await timers.forExecution('e')).toEqual([timer('t2', 2)]);
        expect(await timers.claim('t1', { now: 10 + TTL, owner: 'b', claimTtlMs: TTL })).toBe(false);
      }));

    it('schedule is idempotent on timerId: the first schedule and its claim stand', () =>
      withStores(open, async ({ timers }) => {
        await timers.schedule(timer('t', 100));
        await timers.claim('t', { now: 100, owner: 'a', claimTtlMs: TTL });
        await timers.schedule(timer('t', 50, 'other'));
        expect(await timers.forExecution('e')).toEqual([timer('t', 100)]);
        expect(await timers.forExecution('other')).toEqual([]);
        expect(await timers.claimDue({ now: 200, limit: 10, owner: 'b', claimTtlMs: TTL })).toEqual([]);
      }));

    it('forExecution lists the timers of one execution only', () =>
      withStores(open, async ({ timers }) => {
        await scheduleAll(timers, [timer('a2', 20, 'a'), timer('b1', 10, 'b'), timer('a1', 10, 'a')]);
        const ofA = await timers.forExecution('a');
        expect([...ofA].sort((x, y) => x.dueAt - y.dueAt)).toEqual([
          timer('a1', 10, 'a'),
          timer('a2', 20, 'a'),
        ]);
        expect(await timers.forExecution('none')).toEqual([]);
      }));

    it('nextDueAt is the earliest moment a timer is due and unclaimed', () =>
      withStores(open, async ({ timers }) => {
        expect(await timers.nextDueAt()).toBeNull();
        await scheduleAll(timers, [timer('t2', 200), timer('t1', 100)]);
        expect(await timers.nextDueAt()).toBe(100);
        await timers.claim('t1', { now: 150, owner: 'a', claimTtlMs: TTL });
        expect(await timers.nextDueAt()).toBe(200);
        await timers.claim('t2', { now: 250, owner: 'a', claimTtlMs: 10 });
        expect(await timers.nextDueAt()).toBe(260);
        await timers.complete('t2');
        expect(await timers.nextDueAt()).toBe(150 + TTL);
        await timers.complete('t1');
        expect(await timers.nextDueAt()).toBeNull();
      }));
  });
}
