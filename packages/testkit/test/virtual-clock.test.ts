/** VirtualClock: time moves only by hand, and a runtime on it sleeps without waiting. */

import { DEFAULT_CLOCK_START, VirtualClock } from '@skein/testkit';
import {
  createRuntime,
  defineWorkflow,
  InvalidInputError,
  openMemoryStores,
  readHistory,
} from '@skein/workflow-runtime';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

describe('VirtualClock', () => {
  it('reads its start, moves by advance and set, never back', () => {
    const clock = new VirtualClock();
    expect(clock.now()).toBe(DEFAULT_CLOCK_START);
    expect(clock.advance(250)).toBe(DEFAULT_CLOCK_START + 250);
    expect(clock.set(DEFAULT_CLOCK_START + 1000)).toBe(DEFAULT_CLOCK_START + 1000);
    expect(clock.clock()).toBe(DEFAULT_CLOCK_START + 1000);
    expect(() => clock.set(5)).toThrow(RangeError);
    expect(() => clock.advance(-1)).toThrow(InvalidInputError);
    expect(() => new VirtualClock(1.5)).toThrow(/start/);
  });

  it('a one-hour ctx.sleep is due once the clock is advanced, and the log records the virtual times', async () => {
    const clock = new VirtualClock(1_000);
    const nap = defineWorkflow({
      name: 'nap',
      version: 1,
      input: z.null(),
      async run(ctx) {
        await ctx.sleep('hour', 3_600_000);
        return ctx.now().getTime();
      },
    });
    const stores = openMemoryStores();
    const runtime = createRuntime({ stores, workflows: [nap], clock: () => clock.now() });
    expect((await runtime.execute({ executionId: 'n', workflow: 'nap', input: null })).status).toBe(
      'suspended',
    );
    expect((await runtime.wake('n'))?.status).toBe('suspended');
    clock.advance(3_600_000);
    const done = await runtime.wake('n');
    await runtime.close();
    expect(done).toMatchObject({ status: 'completed', output: 3_601_000 });
    const log = await readHistory(stores.events, 'n');
    expect(log.find((e) => e.type === 'TIMER_SCHEDULED')?.payload).toMatchObject({ dueAt: 3_601_000 });
    expect(log.at(-1)?.recordedAt.getTime()).toBe(3_601_000);
  });
});
