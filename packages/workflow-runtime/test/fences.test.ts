import { defineWorkflow, FenceNotGrantedError, StaleFenceError } from '@skein/workflow-runtime';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { backings, deferred, harness, types, until } from './support/stores.js';

describe.each(backings)('fences at runtime level (adr/0003) on %s', (_name, openBacking) => {
  const h = harness(openBacking);

  it('L3: execute under a fence the store never granted is refused and writes nothing; the head fence stays', async () => {
    const { stores } = h.open();
    let ran = 0;
    const workflow = defineWorkflow({
      name: 'w',
      input: z.object({}),
      run: async (ctx) => ctx.step('s', () => ++ran),
    });
    const runtime = h.runtime({ stores, workflows: [workflow] });
    // A start: no fence was ever taken, so only fence 0 may write seq 0.
    const start = runtime.execute({ executionId: 'n', workflow: 'w', input: {} }, { fence: 3 });
    await expect(start).rejects.toBeInstanceOf(FenceNotGrantedError);
    await expect(start).rejects.toMatchObject({ executionId: 'n', fence: 3, current: 0 });
    expect(await runtime.history('n')).toEqual([]);
    expect(await stores.events.getExecution('n')).toBeNull();
    expect(await stores.events.currentFence('n')).toBe(0);
    // A takeover of pending work under a fence above the one granted last.
    await runtime.enqueue(workflow, {}, { executionId: 'p' });
    const granted = await stores.events.acquireFence('p');
    const takeover = runtime.execute({ executionId: 'p', workflow: 'w' }, { fence: granted + 1 });
    await expect(takeover).rejects.toMatchObject({ name: 'FenceNotGrantedError', current: granted });
    expect(types(await runtime.history('p'))).toEqual(['EXECUTION_STARTED']);
    expect(await stores.events.currentFence('p')).toBe(granted);
    expect(ran).toBe(0);
    // The granted fence takes it over, and the log's fences never go backwards.
    expect((await runtime.execute({ executionId: 'p', workflow: 'w' }, { fence: granted })).status).toBe(
      'completed',
    );
    expect((await runtime.history('p')).map((e) => e.fence)).toEqual([0, granted, granted, granted, granted]);
  });

  it('L3: a fresh start writes seq 0 in fence epoch 0 and acquires nothing', async () => {
    const { stores } = h.open();
    const workflow = defineWorkflow({
      name: 'w',
      input: z.object({}),
      run: async (ctx) => ctx.step('s', () => 1),
    });
    const runtime = h.runtime({ stores, workflows: [workflow] });
    await runtime.execute({ executionId: 'e', workflow: 'w', input: {} });
    expect((await runtime.history('e')).map((e) => e.fence)).toEqual([0, 0, 0, 0]);
    expect(await stores.events.currentFence('e')).toBe(0);
  });

  it('L3: a takeover writes with a larger fence and the old writer is fenced out, writing nothing', async () => {
    const { stores } = h.open();
    const gate = deferred();
    let secondRuns = 0;
    const workflow = defineWorkflow({
      name: 'w',
      input: z.object({}),
      async run(ctx) {
        await ctx.step('first', () => gate.promise);
        return ctx.step('second', () => ++secondRuns);
      },
    });
    const zombie = h.runtime({ stores, workflows: [workflow] });
    const rescuer = h.runtime({ stores, workflows: [workflow] });
    const zombieRun = zombie
      .execute({ executionId: 'z', workflow: 'w', input: {} })
      .catch((error: unknown) => error);
    await until(async () => (await zombie.history('z')).length === 2);

    // The rescuer finds the execution running and takes it over; once its EXECUTION_RECOVERED
    // is in the log the gate opens, and both attempts of 'first' complete.
    const rescuing = rescuer.execute({ executionId: 'z', workflow: 'w', input: {} });
    await until(async () => types(await rescuer.history('z')).includes('EXECUTION_RECOVERED'));
    gate.resolve();
    const rescued = await rescuing;
    expect(rescued.status).toBe('completed');
    const log = await rescuer.history('z');
    const recovered = log.find((e) => e.type === 'EXECUTION_RECOVERED')!;
    expect(recovered.fence).toBeGreaterThan(0);

    // The zombie's own completion of 'first' is refused: stale fence, nothing written.
    expect(await zombieRun).toBeInstanceOf(StaleFenceError);
    expect(await rescuer.history('z')).toHaveLength(log.length);
    expect(types(log).filter((t) => t === 'EXECUTION_COMPLETED')).toHaveLength(1);
    expect(secondRuns).toBe(1);
  });

  it('a start fenced out by a holder that never wrote seq 0 is retried with a fresh fence', async () => {
    const { stores } = h.open();
    const workflow = defineWorkflow({
      name: 'w',
      input: z.object({}),
      run: async (ctx) => ctx.step('s', () => 7),
    });
    const runtime = h.runtime({ stores, workflows: [workflow] });
    const held = await stores.events.acquireFence('f'); // someone took a fence and vanished
    const handle = await runtime.start(workflow, {}, { executionId: 'f' });
    expect(await handle.result()).toBe(7);
    const log = await runtime.history('f');
    expect(log[0]!.type).toBe('EXECUTION_STARTED');
    expect(log[0]!.fence).toBeGreaterThan(held);
  });
});
