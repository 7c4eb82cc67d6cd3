/**
 * A maintenance pass that claims a due timer while the run that scheduled it is still in
 * progress here (between the durable timer and `EXECUTION_SUSPENDED`) leaves the wake-up to
 * itself: once that run has ended it resumes the execution. Before, it skipped the running
 * execution and kept the claim, so the runtime's own wake-up found the timer taken and the
 * execution slept until the claim lapsed.
 */
import { createRuntime, defineWorkflow, openMemoryStores, type Runtime } from '@skein/workflow-runtime';
import { afterEach, expect, test } from 'vitest';
import { z } from 'zod';

const runtimes: Runtime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
});

test('a timer the maintenance claims during the run that suspends on it still wakes the execution', async () => {
  let now = 1_000_000;
  const stores = openMemoryStores();
  const errors: unknown[] = [];
  const nap = defineWorkflow({
    name: 'nap',
    input: z.null(),
    async run(ctx) {
      // A step first makes seq 0 durable before the timer exists: a pass claims only timers of
      // executions whose workflow the index knows (adr/0059).
      await ctx.step('first', () => 1);
      await ctx.sleep('nap', 5);
      return 'woke';
    },
  });
  let runtime: Runtime | undefined;
  const passes: unknown[] = [];
  const schedule = stores.timers.schedule.bind(stores.timers);
  // Right after the run made its timer durable, and before it records the suspension: the
  // timer is due and a maintenance pass runs.
  stores.timers.schedule = async (timer) => {
    await schedule(timer);
    now = timer.dueAt;
    passes.push(await runtime?.maintain());
  };
  runtime = createRuntime({
    stores,
    workflows: [nap],
    clock: () => now,
    maintenance: { intervalMs: 20_000 },
    onError: (error) => errors.push(error),
  });
  runtimes.push(runtime);
  const handle = await runtime.start(nap, null, { executionId: 'nap-1' });
  const result = await Promise.race([
    handle.result(),
    new Promise((resolve) => setTimeout(() => resolve('still asleep after 5 s'), 5_000)),
  ]);
  expect(result).toBe('woke');
  expect(passes).toEqual([{ claimed: [], recovered: [], woken: ['nap-1'] }]);
  expect(errors).toEqual([]);
});
