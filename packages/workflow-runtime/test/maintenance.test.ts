/**
 * docs/supervision.md#without-a-supervisor: a runtime's in-process maintenance (on by default)
 * picks up what no process runs: pending work, due timers of a process that is gone, running
 * executions whose lease expired. Each is claimed first, so a user's own `wake` or `execute`
 * never takes over what the maintenance is already running.
 */
import { defineWorkflow, InvalidInputError } from '@skein/workflow-runtime';
import { executionLeaseKey } from '@skein/workflow-runtime/internal';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { backings, harness, types, until } from './support/stores.js';

describe.each(backings)('in-process maintenance (%s store)', (_, open) => {
  const h = harness(open);
  const ran: string[] = [];
  const job = defineWorkflow({
    name: 'job',
    input: z.string(),
    async run(ctx, name) {
      await ctx.step('work', () => ran.push(name));
      return name;
    },
  });

  test('a pending execution is claimed and run by the next pass, its lease given back', async () => {
    ran.length = 0;
    const { stores } = h.open();
    const enqueuer = h.runtime({ stores, workflows: [job], maintenance: false });
    await enqueuer.enqueue(job, 'queued', { executionId: 'job-1' });
    const worker = h.runtime({ stores, workflows: [job] });
    const pass = await worker.maintain();
    expect(pass).toEqual({ claimed: ['job-1'], recovered: [], woken: [] });
    expect(await worker.handle('job-1').result()).toBe('queued');
    await until(async () => (await stores.leases.get(executionLeaseKey('job-1'))) === null);
    expect(ran).toEqual(['queued']);
    expect(h.backgroundErrors).toEqual([]);
  });

  test('a pass is skipped while a Supervisor leads over the stores (its leader lease, held by another owner)', async () => {
    ran.length = 0;
    const { stores } = h.open();
    expect(
      await stores.leases.claim('supervisor:leader', 'node-elsewhere', 60_000, Date.now()),
    ).not.toBeNull();
    const enqueuer = h.runtime({ stores, workflows: [job], maintenance: false });
    const led = await enqueuer.enqueue(job, 'led', { executionId: 'job-led' });
    const worker = h.runtime({ stores, workflows: [job], maintenance: { intervalMs: 20_000 } });
    expect(await worker.maintain()).toEqual({ claimed: [], recovered: [], woken: [] });
    expect((await led.state())?.status).toBe('pending');
    // The leader is gone: the next pass does the work.
    await stores.leases.release('supervisor:leader', 'node-elsewhere');
    const pass = await worker.maintain();
    expect(pass?.claimed).toEqual(['job-led']);
    expect(await led.result()).toBe('led');
    expect(ran).toEqual(['led']);
    expect(h.backgroundErrors).toEqual([]);
  });

  test('an expired leader lease, or one held by the runtime itself, does not stop the pass', async () => {
    const { stores } = h.open();
    const enqueuer = h.runtime({ stores, workflows: [job], maintenance: false });
    const worker = h.runtime({
      stores,
      workflows: [job],
      lease: { owner: 'me' },
      maintenance: { intervalMs: 20_000 },
    });
    await worker.maintain();
    const mine = await enqueuer.enqueue(job, 'mine', { executionId: 'job-mine' });
    expect(await stores.leases.claim('supervisor:leader', 'me', 60_000, Date.now())).not.toBeNull();
    expect((await worker.maintain())?.claimed).toEqual(['job-mine']);
    expect(await mine.result()).toBe('mine');
    await stores.leases.release('supervisor:leader', 'me');
    const expired = await enqueuer.enqueue(job, 'expired', { executionId: 'job-expired' });
    expect(await stores.leases.claim('supervisor:leader', 'node-gone', 1, Date.now() - 1_000)).not.toBeNull();
    expect((await worker.maintain())?.claimed).toEqual(['job-expired']);
    expect(await expired.result()).toBe('expired');
  });

  test('maintenance: false runs nothing: the execution stays pending', async () => {
    const { stores } = h.open();
    const quiet = h.runtime({ stores, workflows: [job], maintenance: false });
    await quiet.enqueue(job, 'left', { executionId: 'job-2' });
    expect(await quiet.maintain()).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await quiet.loadState('job-2'))?.status).toBe('pending');
  });

  test('a running execution whose lease expired is taken over once; a fresh one is left alone', async () => {
    ran.length = 0;
    const { stores } = h.open();
    let now = Date.UTC(2026, 11, 1);
    const clock = () => now;
    const dead = h.runtime({ stores, workflows: [job], maintenance: false, clock });
    await dead.enqueue(job, 'orphan', { executionId: 'job-3' });
    // A process that took it over and died before anything else: `running`, seq 1.
    await stores.events.append({
      executionId: 'job-3',
      workflow: 'job',
      expectedSeq: 1,
      fence: await stores.events.acquireFence('job-3'),
      events: [
        {
          envelopeId: 'env-recovered',
          type: 'EXECUTION_RECOVERED',
          payload: JSON.stringify({ reason: 'taken over from status pending', fence: 1 }),
          recordedAt: now,
        },
      ],
    });
    const restarted = h.runtime({ stores, workflows: [job], clock, lease: { ttlMs: 1_000 } });
    expect(await restarted.maintain()).toEqual({ claimed: [], recovered: [], woken: [] });
    now += 1_001;
    expect(await restarted.maintain()).toEqual({ claimed: [], recovered: ['job-3'], woken: [] });
    expect(await restarted.handle('job-3').result()).toBe('orphan');
    const log = types(await restarted.history('job-3'));
    expect(log.filter((type) => type === 'EXECUTION_RECOVERED')).toHaveLength(2);
    expect(ran).toEqual(['orphan']);
  });

  test('a wake the user asks for while the maintenance wakes the execution waits for it: one resume', async () => {
    const { stores } = h.open();
    let now = Date.UTC(2026, 11, 1);
    const clock = () => now;
    const napper = defineWorkflow({
      name: 'napper',
      input: z.null(),
      async run(ctx) {
        await ctx.sleep('nap', 60_000);
        return 'rested';
      },
    });
    const first = h.runtime({ stores, workflows: [napper], clock, maintenance: false });
    await first.start(napper, null, { executionId: 'nap-1' });
    await until(async () => (await first.loadState('nap-1'))?.status === 'suspended');
    await first.close();
    now += 60_000;
    const second = h.runtime({ stores, workflows: [napper], clock });
    const [pass, woken] = await Promise.all([second.maintain(), second.wake('nap-1')]);
    // Whichever claimed the timer first resumed it; the wake waited for that resume if not its own.
    expect(pass).not.toBeNull();
    expect(woken?.status).toBe('completed');
    expect(await second.handle('nap-1').result()).toBe('rested');
    const log = types(await second.history('nap-1'));
    expect(log.filter((type) => type === 'EXECUTION_RESUMED')).toHaveLength(1);
    expect(h.backgroundErrors).toEqual([]);
  });

  test('a pass claims only due timers of workflows its runtime registers: the runtime that has them wakes theirs at once', async () => {
    const backing = h.open();
    let now = Date.UTC(2026, 11, 1);
    const clock = () => now;
    const napper = (name: string) =>
      defineWorkflow({
        name,
        input: z.null(),
        async run(ctx) {
          await ctx.sleep('nap', 60_000);
          return `${name} rested`;
        },
      });
    const alpha = napper('alpha');
    const beta = napper('beta');
    const starter = h.runtime({
      stores: backing.stores,
      workflows: [alpha, beta],
      clock,
      maintenance: false,
    });
    await starter.start(alpha, null, { executionId: 'a-1' });
    await starter.start(beta, null, { executionId: 'b-1' });
    await until(async () => (await starter.loadState('a-1'))?.status === 'suspended');
    await until(async () => (await starter.loadState('b-1'))?.status === 'suspended');
    await starter.close();
    // Two processes on one store, each with its own workflows; their first passes find nothing due.
    const ofAlpha = h.runtime({ stores: backing.reopen(), workflows: [alpha], clock });
    const ofBeta = h.runtime({ stores: backing.reopen(), workflows: [beta], clock });
    await new Promise((resolve) => setTimeout(resolve, 20));
    now += 60_000;
    // The alpha one passes first.
    expect(await ofAlpha.maintain()).toEqual({ claimed: [], recovered: [], woken: ['a-1'] });
    expect(await ofBeta.maintain()).toEqual({ claimed: [], recovered: [], woken: ['b-1'] });
    expect(await ofAlpha.handle('a-1').result()).toBe('alpha rested');
    expect(await ofBeta.handle('b-1').result()).toBe('beta rested');
    expect(h.backgroundErrors).toEqual([]);
  });

  test('L7: bad maintenance options are refused with the field named', () => {
    const { stores } = h.open();
    expect(() => h.runtime({ stores, workflows: [job], maintenance: { intervalMs: 0 } })).toThrow(
      /maintenance\.intervalMs/,
    );
    expect(() =>
      h.runtime({ stores, workflows: [job], lease: { ttlMs: 1_000 }, maintenance: { intervalMs: 1_000 } }),
    ).toThrow(/maintenance\.intervalMs: must be below the lease TTL \(1000\), got 1000/);
    expect(() =>
      h.runtime({ stores, workflows: [job], maintenance: { every: 5 } as unknown as { intervalMs: number } }),
    ).toThrow(InvalidInputError);
  });
});
