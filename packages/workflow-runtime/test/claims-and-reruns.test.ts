/**
 * Counters that mean what they say (adr/0044): a claim of pending work is recorded and observed
 * apart from a recovery of a dead owner's run, and a step re-run after its process died sees
 * `rerun: true` with the same attempt number.
 */
import { defineWorkflow, type RuntimeObserver, type StepInfo } from '@skein/workflow-runtime';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { backings, deferred, harness, until } from './support/stores.js';

function listener(): RuntimeObserver & { heard: string[] } {
  const heard: string[] = [];
  return {
    heard,
    executionClaimed: (e) => heard.push(`claimed ${e.executionId}`),
    executionRecovered: (e) => heard.push(`recovered ${e.executionId}`),
  };
}

describe.each(backings)('claims, recoveries and re-runs (%s store)', (_, open) => {
  const h = harness(open);

  test('a claim of enqueued work is EXECUTION_RECOVERED with claimed: true, heard as executionClaimed', async () => {
    const backing = h.open();
    const job = defineWorkflow({ name: 'job', input: z.null(), run: async (ctx) => ctx.step('a', () => 1) });
    const enqueuer = h.runtime({ stores: backing.stores, workflows: [job], maintenance: false });
    await enqueuer.enqueue(job, null, { executionId: 'j-1' });
    const observer = listener();
    const worker = h.runtime({ stores: backing.reopen(), workflows: [job], observers: [observer] });
    expect((await worker.maintain())?.claimed).toEqual(['j-1']);
    expect(await worker.handle('j-1').result()).toBe(1);
    const recovered = (await worker.history('j-1')).find((event) => event.type === 'EXECUTION_RECOVERED');
    expect(recovered?.payload).toMatchObject({ reason: 'taken over from status pending', claimed: true });
    expect(observer.heard).toEqual(['claimed j-1']);
  });

  test('a step re-run after its run died sees rerun: true and the same attempt; a recovery is heard as such', async () => {
    const backing = h.open();
    const seen: Pick<StepInfo, 'attempt' | 'rerun'>[] = [];
    const hang = deferred();
    const charge = defineWorkflow({
      name: 'charge',
      input: z.null(),
      async run(ctx) {
        return ctx.step('charge', async ({ attempt, rerun }) => {
          seen.push({ attempt, rerun });
          if (seen.length === 1) await hang.promise; // the first run never returns
          return `charged ${ctx.executionId}#${attempt}`;
        });
      },
    });
    const first = h.runtime({ stores: backing.stores, workflows: [charge], maintenance: false });
    await first.start(charge, null, { executionId: 'c-1' });
    await until(async () => (await first.history('c-1')).some((event) => event.type === 'STEP_STARTED'));
    const observer = listener();
    const second = h.runtime({
      stores: backing.reopen(),
      workflows: [charge],
      maintenance: false,
      observers: [observer],
    });
    const state = await second.execute({ executionId: 'c-1', workflow: 'charge' });
    hang.resolve();
    expect(state.status).toBe('completed');
    expect(seen).toEqual([
      { attempt: 1, rerun: false },
      { attempt: 1, rerun: true },
    ]);
    const recovered = (await second.history('c-1')).find((event) => event.type === 'EXECUTION_RECOVERED');
    expect(recovered?.payload).not.toHaveProperty('claimed');
    expect(observer.heard).toEqual(['recovered c-1']);
  });
});
