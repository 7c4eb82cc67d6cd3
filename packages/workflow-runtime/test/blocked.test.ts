/**
 * adr/0058: a stuck execution says so. A deploy that changes the code under a running
 * execution makes every replay of its log diverge (`NonDeterminismError`); the runtime records
 * the blockage in the stores, readers see it in `loadState(id).blocked` and
 * `list({ blocked: true })`, the maintenance backs off between attempts and reports it once,
 * and the blockage is gone as soon as the log moves on.
 */
import { defineWorkflow, type Runtime } from '@skein/workflow-runtime';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { realStores } from './support/real-stores.js';
import { deferred, harness, type OpenBacking, until, untilLogHas } from './support/stores.js';

const noBacking: OpenBacking = () => {
  throw new Error('this file opens its stores with realStores');
};

describe.each(realStores)('a blocked execution (%s store)', (_, openStores) => {
  const h = harness(noBacking);

  test('adr/0058: a replay that diverges is recorded, read, backed off, reported once, and cleared when the log moves on', async () => {
    const stores = await openStores();
    const hold = deferred<string>();
    try {
      const shipV1 = defineWorkflow({
        name: 'ship',
        input: z.string(),
        async run(ctx, order) {
          await ctx.step('pack', () => `packed ${order}`);
          return ctx.step('send', () => hold.promise);
        },
      });
      // The same name and version, deployed with its first step renamed: the log no longer fits.
      const shipBroken = defineWorkflow({
        name: 'ship',
        input: z.string(),
        async run(ctx, order) {
          await ctx.step('wrap', () => `wrapped ${order}`);
          return 'never';
        },
      });
      const shipFixed = defineWorkflow({
        name: 'ship',
        input: z.string(),
        async run(ctx, order) {
          await ctx.step('pack', () => `packed ${order}`);
          return ctx.step('send', () => `sent ${order}`);
        },
      });
      const first = h.runtime({ stores, workflows: [shipV1], maintenance: false });
      await first.start(shipV1, 'o-1', { executionId: 'ship-1' });
      await untilLogHas(first, 'ship-1', 'STEP_STARTED', 2); // `send` runs: the execution is `running`

      let now = Date.now() + 5_000; // past the lease TTL of the first process's last write
      const clock = () => now;
      const reported: unknown[] = [];
      const broken = h.runtime({
        stores,
        workflows: [shipBroken],
        clock,
        lease: { ttlMs: 1_000 },
        onError: (error) => reported.push(error),
      });
      const blockedOf = async (runtime: Runtime) => (await runtime.loadState('ship-1'))?.blocked;
      await until(async () => (await blockedOf(broken))?.attempts === 1);
      const state = await broken.loadState('ship-1');
      expect(state?.status).toBe('running');
      expect(state?.blocked).toEqual({
        code: 'NON_DETERMINISM',
        message: expect.stringMatching(/position 0/),
        since: now,
        attempts: 1,
        lastAt: now,
        retryAt: now + 1_000,
      });
      const listed = await broken.list({ blocked: true });
      expect(listed.items.map((item) => [item.executionId, item.blocked?.code])).toEqual([
        ['ship-1', 'NON_DETERMINISM'],
      ]);
      expect((await broken.list({ blocked: true, status: 'completed' })).items).toEqual([]);

      // Passes before the back-off has passed leave it alone.
      for (let i = 0; i < 3; i++) expect((await broken.maintain())?.recovered).toEqual([]);
      expect((await blockedOf(broken))?.attempts).toBe(1);
      now += 1_000;
      await broken.maintain();
      await until(async () => (await blockedOf(broken))?.attempts === 2);
      expect((await blockedOf(broken))?.since).toBe(now - 1_000);
      // Reported once, however often it was tried.
      expect(reported.map((error) => (error as { code?: string }).code)).toEqual(['NON_DETERMINISM']);
      await broken.close();

      // The deploy is rolled back: the next takeover replays, and the log moves on.
      now += 10_000;
      const fixed = h.runtime({ stores, workflows: [shipFixed], clock, lease: { ttlMs: 1_000 } });
      await fixed.maintain();
      expect(await fixed.handle('ship-1').result()).toBe('sent o-1');
      expect(await blockedOf(fixed)).toBeUndefined();
      expect((await fixed.list({ blocked: true })).items).toEqual([]);
      await fixed.close();
      hold.resolve('late'); // the first process's step ends; its write is fenced out
      await first.close();
    } finally {
      hold.resolve('late');
      await stores.close();
    }
  });
});
