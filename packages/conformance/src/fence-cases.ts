/** L3: fences grow strictly, also before seq 0; a stale fence, or one never granted, writes nothing. */
import { FenceNotGrantedError, StaleFenceError } from '@skein/workflow-runtime';
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

  it('L3: a fence above the newest granted one is refused with FenceNotGrantedError and writes nothing', () =>
    withStores(open, async ({ events }) => {
      // A start under a fence no acquireFence returned: no head, no log, the fence stays 0.
      const start0 = await rejectionOf(
        events.append(appendOf('ungranted-0', { seq: 0, fence: 5 }, drafts('EXECUTION_STARTED'))),
      );
      expect(start0).toBeInstanceOf(FenceNotGrantedError);
      expect(start0).toMatchObject({ executionId: 'ungranted-0', fence: 5, current: 0 });
      expect(await events.read('ungranted-0')).toEqual([]);
      expect(await events.getExecution('ungranted-0')).toBeNull();
      expect(await events.currentFence('ungranted-0')).toBe(0);
      // After appends under the granted fence (the step and status-move paths), one above it.
      const granted = await events.acquireFence('ungranted-1');
      await start(events, 'ungranted-1', { fence: granted });
      await events.append(appendOf('ungranted-1', { seq: 1, fence: granted }, drafts('STEP_STARTED')));
      for (const type of ['STEP_COMPLETED', 'EXECUTION_SUSPENDED', 'EXECUTION_COMPLETED'] as const) {
        const error = await rejectionOf(
          events.append(appendOf('ungranted-1', { seq: 2, fence: granted + 1 }, drafts(type))),
        );
        expect(error).toBeInstanceOf(FenceNotGrantedError);
        expect(error).toMatchObject({ executionId: 'ungranted-1', fence: granted + 1, current: granted });
        expect(error.message).toContain('never granted');
      }
      expect(await typesOf(events, 'ungranted-1')).toEqual(['EXECUTION_STARTED', 'STEP_STARTED']);
      expect(await events.currentFence('ungranted-1')).toBe(granted);
      expect(await events.getExecution('ungranted-1')).toMatchObject({ sequence: 1, status: 'running' });
      // The log's fences never go backwards: the next granted fence writes as before.
      const next = await events.acquireFence('ungranted-1');
      await events.append(appendOf('ungranted-1', { seq: 2, fence: next }, drafts('STEP_COMPLETED')));
      expect((await events.read('ungranted-1')).map((event) => event.fence)).toEqual([
        granted,
        granted,
        next,
      ]);
    }));

  it('L3/L4: in concurrent appends, each ungranted fence is refused alone and the granted ones commit', () =>
    withStores(open, async ({ events }) => {
      const ids = Array.from({ length: 12 }, (_, i) => `ungranted-many-${i}`);
      for (const id of ids) {
        await start(events, id);
        await events.append(appendOf(id, { seq: 1 }, drafts('STEP_STARTED')));
      }
      const outcomes = await Promise.allSettled(
        ids.map((id, i) => events.append(appendOf(id, { seq: 2, fence: i % 2 }, drafts('STEP_COMPLETED')))),
      );
      ids.forEach((id, i) => {
        const outcome = outcomes[i]!;
        if (i % 2 === 0) expect(outcome.status, id).toBe('fulfilled');
        else {
          expect(outcome.status, id).toBe('rejected');
          expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(FenceNotGrantedError);
        }
      });
      for (const [i, id] of ids.entries())
        expect((await events.read(id)).length, id).toBe(i % 2 === 0 ? 3 : 2);
    }));

  it('L3: takeOverPending, where the store has it, fences and reads only the pending executions, each once', () =>
    withStores(open, async ({ events }) => {
      if (events.takeOverPending === undefined) return;
      await start(events, 'tp-pending');
      await events.append(appendOf('tp-pending', { seq: 1 }, drafts('CANCEL_REQUESTED')));
      await start(events, 'tp-other');
      await start(events, 'tp-running');
      await events.append(appendOf('tp-running', { seq: 1 }, drafts('STEP_STARTED')));
      await start(events, 'tp-ended');
      await events.append(appendOf('tp-ended', { seq: 1 }, drafts('EXECUTION_COMPLETED')));
      await events.acquireFence('tp-fenced-only'); // a head with no seq 0
      const before = await events.acquireFence('tp-pending');
      const fences = async () =>
        Promise.all(['tp-running', 'tp-ended', 'tp-fenced-only'].map((id) => events.currentFence(id)));
      const untouched = await fences();
      const taken = await events.takeOverPending([
        'tp-running',
        'tp-pending',
        'tp-ended',
        'tp-missing',
        'tp-fenced-only',
        'tp-pending',
        'tp-other',
      ]);
      const byId = new Map(taken.map((one) => [one.executionId, one]));
      expect(taken).toHaveLength(2);
      expect([...byId.keys()].sort()).toEqual(['tp-other', 'tp-pending']);
      expect(byId.get('tp-pending')!.fence).toBeGreaterThan(before);
      expect(await events.currentFence('tp-pending')).toBe(byId.get('tp-pending')!.fence);
      expect(byId.get('tp-pending')!.events).toEqual(await events.read('tp-pending'));
      expect(byId.get('tp-other')!.events).toEqual(await events.read('tp-other'));
      expect(byId.get('tp-other')!.fence).toBeGreaterThan(0);
      // Whatever is not pending keeps its fence, and nothing else changed.
      expect(await fences()).toEqual(untouched);
      expect(await events.getExecution('tp-missing')).toBeNull();
      expect(await events.takeOverPending([])).toEqual([]);
      // The old fence is fenced out from now on; the taken one writes.
      const refused = await rejectionOf(
        events.append(appendOf('tp-pending', { seq: 2, fence: before }, drafts('EXECUTION_RECOVERED'))),
      );
      expect(refused).toBeInstanceOf(StaleFenceError);
      const fence = byId.get('tp-pending')!.fence;
      await events.append(appendOf('tp-pending', { seq: 2, fence }, drafts('EXECUTION_RECOVERED')));
      expect((await events.getExecution('tp-pending'))?.status).toBe('running');
      expect(await events.takeOverPending(['tp-pending'])).toEqual([]);
    }));
}
