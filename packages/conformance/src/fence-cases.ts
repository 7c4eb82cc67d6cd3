/** L3: fences grow strictly, also before seq 0, and a stale fence writes nothing. */
import { StaleFenceError } from '@skein/workflow-runtime';
import { expect, it } from 'vitest';
import { appendOf, drafts, start, typesOf } from './drafts.js';
import type { EventStoreSuiteOptions } from './event-store-suite.js';
import { rejectionOf, withStores } from './harness.js';

/** Register the L3 cases. */
export function fenceCases({ open }: EventStoreSuiteOptions): void {
  it('L3: acquireFence is strictly increasing, also before seq 0 exists', () =>
    withStores(open, async ({ events }) => {
      expect(await events.currentFence('f')).toBe(0);
      const first = await events.acquireFence('f');
      const second = await events.acquireFence('f');
      expect(first).toBeGreaterThan(0);
      expect(second).toBeGreaterThan(first);
      expect(await events.currentFence('f')).toBe(second);
      expect(await events.getExecution('f')).toBeNull();
      expect((await events.listExecutions()).items).toEqual([]);
      await start(events, 'f', { fence: second });
      expect(await events.acquireFence('f')).toBeGreaterThan(second);
      expect(await events.currentFence('other')).toBe(0);
    }));

  it('L3: 20 concurrent acquireFence calls get 20 distinct fences', () =>
    withStores(open, async ({ events }) => {
      const fences = await Promise.all(Array.from({ length: 20 }, () => events.acquireFence('many')));
      expect(new Set(fences).size).toBe(20);
      expect(await events.currentFence('many')).toBe(Math.max(...fences));
    }));

  it('L3: a stale fence is refused with StaleFenceError naming execution, fence and current, and writes nothing', () =>
    withStores(open, async ({ events }) => {
      const old = await events.acquireFence('stale');
      await start(events, 'stale', { fence: old });
      const current = await events.acquireFence('stale');
      const error = await rejectionOf(
        events.append(appendOf('stale', { seq: 1, fence: old }, drafts('STEP_STARTED', 'STEP_COMPLETED'))),
      );
      expect(error).toBeInstanceOf(StaleFenceError);
      expect(error).toMatchObject({ executionId: 'stale', fence: old, current });
      expect(error.message).toContain('stale');
      expect(await typesOf(events, 'stale')).toEqual(['EXECUTION_STARTED']);
      expect(await events.getExecution('stale')).toMatchObject({ sequence: 0, status: 'pending' });
      await events.append(appendOf('stale', { seq: 1, fence: current }, drafts('STEP_STARTED')));
      expect(await typesOf(events, 'stale')).toEqual(['EXECUTION_STARTED', 'STEP_STARTED']);
    }));

  it('L3: a start fenced out before seq 0 writes nothing', () =>
    withStores(open, async ({ events }) => {
      const mine = await events.acquireFence('fenced-start');
      const theirs = await events.acquireFence('fenced-start');
      const error = await rejectionOf(
        events.append(appendOf('fenced-start', { seq: 0, fence: mine }, drafts('EXECUTION_STARTED'))),
      );
      expect(error).toBeInstanceOf(StaleFenceError);
      expect(error).toMatchObject({ executionId: 'fenced-start', fence: mine, current: theirs });
      expect(await events.read('fenced-start')).toEqual([]);
      expect(await events.getExecution('fenced-start')).toBeNull();
    }));
}
