/** `scheduleStoreSuite`: schedule state rows written compare-and-set on their revision. */
import type { ScheduleState } from '@skein/workflow-runtime';
import type { ScheduleStore } from '@skein/workflow-runtime/spi';
import { describe, expect, it } from 'vitest';
import { withStores } from './harness.js';

/** Options of {@link scheduleStoreSuite}. */
export interface ScheduleStoreSuiteOptions {
  /** Names the implementation in test titles. */
  name: string;
  /** Returns a fresh, empty schedule store; each test closes what it opened. */
  open: () => ScheduleStoreUnderTest | Promise<ScheduleStoreUnderTest>;
}

/** The stores the suite needs: a schedule store and `close`. */
export interface ScheduleStoreUnderTest {
  schedules?: ScheduleStore;
  close(): void | Promise<void>;
}

const first: ScheduleState = { name: 'nightly', nextDueAt: 1_000, paused: false, revision: 1 };

/**
 * Register the schedule-store conformance tests in the current vitest file.
 * @example
 * scheduleStoreSuite({ name: 'memory', open: () => openMemoryStores() });
 */
export function scheduleStoreSuite({ name, open }: ScheduleStoreSuiteOptions): void {
  const withSchedules = (body: (schedules: ScheduleStore) => Promise<void>) =>
    withStores(open, async (stores) => {
      if (stores.schedules === undefined) throw new Error(`${name}: the stores have no schedule store`);
      await body(stores.schedules);
    });

  describe(`${name}: schedule store`, () => {
    it('the first save creates the row; a second first save is refused', () =>
      withSchedules(async (schedules) => {
        expect(await schedules.get('nightly')).toBeNull();
        expect(await schedules.save(null, first)).toBe(true);
        expect(await schedules.get('nightly')).toEqual(first);
        expect(await schedules.save(null, { ...first, nextDueAt: 5 })).toBe(false);
        expect(await schedules.get('nightly')).toEqual(first);
      }));

    it('a save at the stored revision writes every field; a stale revision writes nothing', () =>
      withSchedules(async (schedules) => {
        await schedules.save(null, first);
        const next: ScheduleState = {
          ...first,
          nextDueAt: 2_000,
          paused: true,
          revision: 2,
          lastExecutionId: 'schedule:nightly:x',
          bufferedDueAt: 1_500,
        };
        expect(await schedules.save(1, next)).toBe(true);
        expect(await schedules.get('nightly')).toEqual(next);
        expect(await schedules.save(1, { ...first, revision: 2 })).toBe(false);
        const cleared: ScheduleState = { name: 'nightly', nextDueAt: 3_000, paused: false, revision: 3 };
        expect(await schedules.save(2, cleared)).toBe(true);
        expect(await schedules.get('nightly')).toEqual(cleared);
      }));

    it('of concurrent saves at one revision exactly one wins', () =>
      withSchedules(async (schedules) => {
        await schedules.save(null, first);
        const results = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            schedules.save(1, { ...first, nextDueAt: 10 + i, revision: 2 }),
          ),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
        const winner = results.indexOf(true);
        expect(await schedules.get('nightly')).toMatchObject({ nextDueAt: 10 + winner, revision: 2 });
      }));

    it('schedules are independent rows', () =>
      withSchedules(async (schedules) => {
        await schedules.save(null, first);
        await schedules.save(null, { ...first, name: 'hourly', nextDueAt: 7 });
        expect(await schedules.get('hourly')).toMatchObject({ nextDueAt: 7 });
        expect(await schedules.get('nightly')).toMatchObject({ nextDueAt: 1_000 });
      }));
  });
}
