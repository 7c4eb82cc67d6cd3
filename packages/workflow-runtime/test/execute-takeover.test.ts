/**
 * `execute(…, { takeover })` (adr/0086): a pending execution taken over in its store
 * (`EventStore.takeOverPending`) runs under the takeover's fence from the takeover's log, with
 * no read and no fence of its own; a log that is no longer pending writes nothing; a takeover
 * fenced out since is refused at its first append; bad options are refused before any write.
 * With `existing: true` (a queue's claim, adr/0096) the caller holds the queue slot: the run
 * does not look it up.
 */
import { defineQueue, defineWorkflow, type EventStore, InvalidInputError } from '@skein/workflow-runtime';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { backings, harness, types } from './support/stores.js';

const job = defineWorkflow({
  name: 'job',
  input: z.object({ n: z.number() }),
  run: async (ctx, { n }) => ctx.step('a', () => n + 1),
});

/** `events` with a count of its reads and fence acquisitions. */
function counting(events: EventStore): { events: EventStore; reads: () => number } {
  let reads = 0;
  return {
    events: new Proxy(events, {
      get(inner, key, receiver) {
        const value = Reflect.get(inner, key, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (key === 'read' || key === 'acquireFence' || key === 'getExecution') reads += 1;
          return (value as (...a: unknown[]) => unknown).apply(inner, args);
        };
      },
    }),
    reads: () => reads,
  };
}

describe.each(backings)('execute with a takeover (%s store)', (_, open) => {
  const h = harness(open);

  test('runs the pending execution under the takeover fence from its log, reading nothing itself', async () => {
    const backing = h.open();
    const { events, reads } = counting(backing.stores.events);
    const runtime = h.runtime({
      stores: { ...backing.stores, events },
      workflows: [job],
      maintenance: false,
    });
    await runtime.enqueue(job, { n: 1 }, { executionId: 't-1' });
    const [takeover] = await backing.stores.events.takeOverPending!(['t-1']);
    const before = reads();
    const state = await runtime.execute({ executionId: 't-1', workflow: 'job' }, { takeover: takeover! });
    expect(state.status).toBe('completed');
    expect(state.output).toBe(2);
    expect(reads()).toBe(before);
    const log = await runtime.history('t-1');
    expect(types(log)).toEqual([
      'EXECUTION_STARTED',
      'EXECUTION_RECOVERED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'EXECUTION_COMPLETED',
    ]);
    expect(log.slice(1).every((event) => event.fence === takeover!.fence)).toBe(true);
  });

  test('a takeover whose log is no longer pending writes nothing and returns the state', async () => {
    const backing = h.open();
    const runtime = h.runtime({ stores: backing.stores, workflows: [job], maintenance: false });
    await runtime.enqueue(job, { n: 1 }, { executionId: 't-2' });
    const [takeover] = await backing.stores.events.takeOverPending!(['t-2']);
    await runtime.execute({ executionId: 't-2', workflow: 'job' }); // another caller ran it meanwhile
    const length = (await runtime.history('t-2')).length;
    const log = takeover!.events.concat(
      (await backing.stores.events.read('t-2', 1)).map((event) => ({ ...event })),
    );
    const state = await runtime.execute(
      { executionId: 't-2', workflow: 'job' },
      { takeover: { ...takeover!, events: log } },
    );
    expect(state.status).toBe('completed');
    expect(await runtime.history('t-2')).toHaveLength(length);
  });

  test('a takeover fenced out since (a newer holder) writes nothing: its first append is refused', async () => {
    const backing = h.open();
    const runtime = h.runtime({ stores: backing.stores, workflows: [job], maintenance: false });
    await runtime.enqueue(job, { n: 1 }, { executionId: 't-3' });
    const [zombie] = await backing.stores.events.takeOverPending!(['t-3']);
    await backing.stores.events.acquireFence('t-3'); // a newer holder
    await expect(
      runtime.execute({ executionId: 't-3', workflow: 'job' }, { takeover: zombie! }),
    ).rejects.toMatchObject({ name: 'StaleFenceError' });
    expect(types(await runtime.history('t-3'))).toEqual(['EXECUTION_STARTED']);
  });

  test("with existing: true the run takes the caller's word for the queue slot; without it, an unheld slot runs nothing", async () => {
    const backing = h.open();
    const queue = defineQueue({ name: 'q', concurrency: 1 });
    const runtime = h.runtime({
      stores: backing.stores,
      workflows: [job],
      queues: [queue],
      maintenance: false,
    });
    await runtime.enqueue(job, { n: 1 }, { executionId: 't-5', queue });
    await runtime.enqueue(job, { n: 2 }, { executionId: 't-6', queue });
    const request = (executionId: string) => ({ executionId, workflow: 'job' });
    // Nobody holds t-5's slot: a takeover alone looks it up and leaves the execution to its queue.
    const [alone] = await backing.stores.events.takeOverPending!(['t-5']);
    const left = await runtime.execute(request('t-5'), { takeover: alone! });
    expect(left.status).toBe('pending');
    expect(types(await runtime.history('t-5'))).toEqual(['EXECUTION_STARTED']);
    // The caller says it holds t-6's slot (a queue's claim that took it): the run goes on.
    const [held] = await backing.stores.events.takeOverPending!(['t-6']);
    const state = await runtime.execute(request('t-6'), { takeover: held!, existing: true });
    expect(state.status).toBe('completed');
    expect(state.output).toBe(3);
  });

  test('bad takeover options are refused with InvalidInputError before anything is written', async () => {
    const backing = h.open();
    const runtime = h.runtime({ stores: backing.stores, workflows: [job], maintenance: false });
    await runtime.enqueue(job, { n: 1 }, { executionId: 't-4' });
    const [takeover] = await backing.stores.events.takeOverPending!(['t-4']);
    const fence = await backing.stores.events.currentFence('t-4');
    const request = { executionId: 't-4', workflow: 'job' };
    const refusals = [
      { takeover: { ...takeover!, executionId: 't-other' } },
      { takeover: takeover!, fence: takeover!.fence },
      { takeover: takeover!, expect: { status: 'pending' as const } },
      { takeover: { ...takeover!, events: [{ ...takeover!.events[0]!, seq: 1 }] } },
      { takeover: { ...takeover!, fence: 0 } },
    ];
    for (const options of refusals)
      await expect(runtime.execute(request, options)).rejects.toBeInstanceOf(InvalidInputError);
    expect(types(await runtime.history('t-4'))).toEqual(['EXECUTION_STARTED']);
    expect(await backing.stores.events.currentFence('t-4')).toBe(fence);
  });
});
