/**
 * adr/0058 through a Supervisor: a running execution whose replay diverges after a deploy is
 * recorded as blocked, retried with back-off, reported once in the tick reports, and still
 * dead-lettered at the tick-failure deadline, its blockage cleared.
 */
import { Supervisor } from '@skein/worker-runtime-local';
import { defineWorkflow } from '@skein/workflow-runtime';
import { expect, it } from 'vitest';
import { z } from 'zod';
import { deferred, harness, manualClock, types, until } from './support/sqlite.js';

const h = harness();

it('adr/0058: a blocked execution is retried with back-off, reported once, and dead-lettered at the deadline', async () => {
  const db = h.db();
  const clock = manualClock();
  const hold = deferred();
  const shipV1 = defineWorkflow({
    name: 'ship',
    input: z.null(),
    async run(ctx) {
      await ctx.step('pack', () => 'packed');
      return ctx.step('send', async () => {
        await hold.promise;
        return 'sent';
      });
    },
  });
  const shipBroken = defineWorkflow({
    name: 'ship',
    input: z.null(),
    async run(ctx) {
      return ctx.step('wrap', () => 'wrapped');
    },
  });
  const first = h.runtime({ stores: db.stores, workflows: [shipV1], clock: clock.now, maintenance: false });
  await first.start(shipV1, null, { executionId: 'ship-1' });
  await until(
    async () => types(await first.history('ship-1')).filter((t) => t === 'STEP_STARTED').length === 2,
  );

  const stores = db.connect();
  const runtime = h.runtime({ stores, workflows: [shipBroken], clock: clock.now, lease: { ttlMs: 1_000 } });
  const supervisor = new Supervisor({
    runtime,
    stores,
    tickIntervalMs: 100,
    tickFailureDeadlineMs: 10_000,
    clock: clock.now,
  });
  clock.advance(2_000); // the first process's last write is older than the lease TTL
  try {
    await blockedThenDeadLettered();
  } finally {
    await supervisor.stop();
    hold.resolve();
    await first.close();
  }

  async function blockedThenDeadLettered(): Promise<void> {
    const tick = async () => {
      const report = await supervisor.tick();
      await supervisor.idle();
      return report;
    };
    expect((await tick()).recovered).toEqual(['ship-1']);
    const second = await tick();
    expect(second.recovered).toEqual([]); // backing off
    expect(second.errors.map(([id, error]) => [id, (error as { code?: string }).code])).toEqual([
      ['ship-1', 'NON_DETERMINISM'],
    ]);
    expect((await runtime.loadState('ship-1'))?.blocked?.attempts).toBe(1);

    const later: unknown[] = [];
    let deadLettered: string[] = [];
    for (let i = 0; i < 30 && deadLettered.length === 0; i++) {
      clock.advance(1_000);
      const report = await tick();
      later.push(...report.errors);
      deadLettered = report.deadLettered;
    }
    expect(deadLettered).toEqual(['ship-1']);
    expect(later).toEqual([]); // the blockage was reported once
    const log = types(await runtime.history('ship-1'));
    expect(log.at(-1)).toBe('EXECUTION_DEAD_LETTERED');
    expect(await stores.blockages?.get('ship-1')).toBeNull();
  }
});
