import { leaseExpired } from '@skein/worker-runtime-local';
import { defineWorkflow, recoverAbandoned } from '@skein/workflow-runtime';
import { executionLeaseKey } from '@skein/workflow-runtime/internal';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { count, deferred, harness, manualClock, types, until, watchedLeases } from './support/sqlite.js';

const h = harness();
let gate = deferred();
const effects = new Map<string, number>();
const slow = defineWorkflow({
  name: 'slow',
  input: z.object({ ms: z.number() }),
  async run(ctx, { ms }) {
    await ctx.step('long', async ({ executionId }) => {
      effects.set(executionId, (effects.get(executionId) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, ms));
    });
    return ctx.step('after', () => 'done');
  },
});
const held = defineWorkflow({
  name: 'held',
  input: z.object({}),
  async run(ctx) {
    return ctx.step('wait', async ({ executionId }) => {
      effects.set(executionId, (effects.get(executionId) ?? 0) + 1);
      await gate.promise;
      return 'released';
    });
  },
});

describe('execution leases (opt-in)', () => {
  it('a step lasting 10x the lease TTL keeps its lease, and the lease is released at the end', async () => {
    const db = h.db();
    const runtime = h.runtime({ stores: db.stores, workflows: [slow], lease: { ttlMs: 300 } });
    const handle = await runtime.start(slow, { ms: 3_000 }, { executionId: 'long-1' });
    const key = executionLeaseKey('long-1');
    await until(async () => (await db.stores.leases.get(key)) !== null);
    let checks = 0;
    while ((await runtime.loadState('long-1'))?.status !== 'completed') {
      const lease = await db.stores.leases.get(key);
      const state = await runtime.loadState('long-1');
      if (state?.status === 'running') {
        expect(lease?.owner).toBe(runtime.nodeId);
        expect(lease!.expiresAt).toBeGreaterThan(Date.now());
        checks += 1;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(checks).toBeGreaterThan(10);
    expect(await handle.result()).toBe('done');
    await until(async () => (await db.stores.leases.get(key)) === null);
  });

  it('a run shorter than a third of the TTL writes no lease row; one that outlasts it claims at the first renewal (adr/0006)', async () => {
    const db = h.db();
    const { stores, calls } = watchedLeases(db.stores);
    const runtime = h.runtime({ stores, workflows: [slow], lease: { ttlMs: 3_000 } });
    const short = await runtime.start(slow, { ms: 10 }, { executionId: 'short-1' });
    expect(await short.result()).toBe('done');
    expect(calls.claim).toEqual([]);
    const long = await runtime.start(slow, { ms: 1_500 }, { executionId: 'long-2' });
    await until(async () => (await db.stores.leases.get(executionLeaseKey('long-2'))) !== null);
    expect(calls.claim).toEqual([executionLeaseKey('long-2')]);
    expect(await long.result()).toBe('done');
    await until(async () => (await db.stores.leases.get(executionLeaseKey('long-2'))) === null);
  });

  it('leases off (the default) writes no lease row', async () => {
    const db = h.db();
    const runtime = h.runtime({ stores: db.stores, workflows: [slow] });
    const handle = await runtime.start(slow, { ms: 100 }, { executionId: 'off-1' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await db.stores.leases.get(executionLeaseKey('off-1'))).toBeNull();
    await handle.result();
    expect(await db.stores.leases.listExpired(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
  });
});

describe('leaseExpired', () => {
  it('with a lease row: abandoned once it expired', async () => {
    const db = h.db();
    const clock = manualClock();
    const summary = {
      executionId: 'a',
      workflow: 'w',
      status: 'running' as const,
      sequence: 3,
      updatedAt: clock.now(),
    };
    await db.stores.leases.claim(executionLeaseKey('a'), 'node-1', 1_000, clock.now());
    const expired = leaseExpired(db.stores, { ttlMs: 1_000, clock: clock.now });
    expect(await expired(summary)).toBe(false);
    clock.advance(1_000);
    expect(await expired(summary)).toBe(true);
  });

  it('without a lease row: abandoned only once the last event is older than the TTL (adr/0006)', async () => {
    const db = h.db();
    const clock = manualClock();
    const expired = leaseExpired(db.stores, { ttlMs: 1_000, clock: clock.now });
    const summary = {
      executionId: 'b',
      workflow: 'w',
      status: 'running' as const,
      sequence: 1,
      updatedAt: clock.now(),
    };
    clock.advance(1_000);
    expect(await expired(summary)).toBe(false);
    clock.advance(1);
    expect(await expired(summary)).toBe(true);
  });
  it('an expired row with an event newer than its last claim (a takeover not yet claimed) waits for that event to age', async () => {
    const db = h.db();
    const clock = manualClock();
    await db.stores.leases.claim(executionLeaseKey('c'), 'dead-node', 1_000, clock.now());
    clock.advance(5_000); // the dead node's row expired long ago; a new holder has just appended
    const summary = {
      executionId: 'c',
      workflow: 'w',
      status: 'running' as const,
      sequence: 4,
      updatedAt: clock.now(),
    };
    const expired = leaseExpired(db.stores, { ttlMs: 1_000, clock: clock.now });
    expect(await expired(summary)).toBe(false);
    clock.advance(1_000);
    expect(await expired(summary)).toBe(false);
    clock.advance(1);
    expect(await expired(summary)).toBe(true);
  });

  it('an execution written within the TTL is alive without a read of its lease row; a quiet one is judged by its row (adr/0091)', async () => {
    const db = h.db();
    const clock = manualClock();
    const { stores, calls } = watchedLeases(db.stores);
    // An expired row of a dead owner: the fresh event is what keeps the execution alive.
    await db.stores.leases.claim(executionLeaseKey('fresh'), 'dead-node', 1_000, clock.now() - 5_000);
    await db.stores.leases.claim(executionLeaseKey('quiet'), 'node-1', 1_000, clock.now() - 999);
    const expired = leaseExpired(stores, { ttlMs: 1_000, clock: clock.now });
    const summary = (executionId: string, updatedAt: number) => ({
      executionId,
      workflow: 'w',
      status: 'running' as const,
      sequence: 2,
      updatedAt,
    });
    expect(await expired(summary('fresh', clock.now() - 999))).toBe(false);
    expect(calls.get).toEqual([]);
    expect(await expired(summary('quiet', clock.now() - 1_000))).toBe(false);
    expect(calls.get).toEqual([executionLeaseKey('quiet')]);
    clock.advance(1);
    expect(await expired(summary('quiet', clock.now() - 1_001))).toBe(true);
  });
});

describe('recoverAbandoned', () => {
  it('isAbandoned is required: omitting it is a type error and a runtime error, and nothing is written', async () => {
    const db = h.db();
    const runtime = h.runtime({ stores: db.stores, workflows: [held] });
    expectTypeOf(recoverAbandoned).parameter(1).toHaveProperty('isAbandoned');
    // @ts-expect-error isAbandoned has no default
    await expect(recoverAbandoned(runtime, {})).rejects.toThrow(/isAbandoned/);
    // @ts-expect-error the options are required
    await expect(recoverAbandoned(runtime)).rejects.toThrow(/isAbandoned/);
    expect((await db.stores.events.listExecutions()).items).toEqual([]);
  });

  it('resumes only what the predicate calls abandoned, through EXECUTION_RECOVERED; completed steps do not re-run', async () => {
    gate = deferred();
    const db = h.db();
    const dead = h.runtime({ stores: db.stores, workflows: [held, slow] });
    await dead.start(held, {}, { executionId: 'dead-1' });
    await dead.start(held, {}, { executionId: 'alive-1' });
    await dead.enqueue(slow, { ms: 0 }, { executionId: 'pending-1' });
    await until(() => effects.get('dead-1') === 1 && effects.get('alive-1') === 1);

    const live = h.runtime({ stores: db.connect(), workflows: [held, slow] });
    gate.resolve();
    const asked: string[] = [];
    const report = await recoverAbandoned(live, {
      isAbandoned: (e) => {
        asked.push(e.executionId);
        return e.executionId !== 'alive-1';
      },
    });
    expect(asked.sort()).toEqual(['alive-1', 'dead-1', 'pending-1']);
    expect(report.scanned).toBe(3);
    expect(report.recovered.sort()).toEqual(['dead-1', 'pending-1']);
    expect(report.skipped).toBe(1);
    expect(report.errors).toEqual([]);
    const log = await live.history('pending-1');
    expect(types(log)).toContain('EXECUTION_RECOVERED');
    expect(types(log).at(-1)).toBe('EXECUTION_COMPLETED');
    expect(count(await live.history('dead-1'), 'EXECUTION_RECOVERED')).toBe(1);
    expect(count(await live.history('alive-1'), 'EXECUTION_RECOVERED')).toBe(0);
  });

  it('re-reads the status right before acting: an execution that moved on since the listing is skipped', async () => {
    gate = deferred();
    gate.resolve();
    const db = h.db();
    const runtime = h.runtime({ stores: db.stores, workflows: [slow] });
    await runtime.enqueue(slow, { ms: 0 }, { executionId: 'moved-1' });
    const report = await recoverAbandoned(runtime, {
      isAbandoned: async () => {
        // The owner finishes it between the listing and the action.
        await runtime.execute({ executionId: 'moved-1', workflow: 'slow' });
        return true;
      },
    });
    expect(report.recovered).toEqual([]);
    expect(report.skipped).toBe(1);
    expect(count(await runtime.history('moved-1'), 'EXECUTION_RECOVERED')).toBe(1);
  });

  it('a resume that throws is reported and left for the next pass, which recovers it', async () => {
    const db = h.db();
    const runtime = h.runtime({ stores: db.stores, workflows: [slow] });
    await runtime.enqueue(slow, { ms: 0 }, { executionId: 'flaky-1' });
    let fail = true;
    const flaky = {
      stores: runtime.stores,
      execute: (request: { executionId: string; workflow: string }) =>
        fail ? Promise.reject(new Error('worker down')) : runtime.execute(request),
    };
    const first = await recoverAbandoned(flaky, { isAbandoned: () => true });
    expect(first.recovered).toEqual([]);
    expect(first.errors.map(([id, e]) => [id, (e as Error).message])).toEqual([['flaky-1', 'worker down']]);
    fail = false;
    const second = await recoverAbandoned(flaky, { isAbandoned: () => true });
    expect(second.recovered).toEqual(['flaky-1']);
    expect((await runtime.loadState('flaky-1'))?.status).toBe('completed');
  });
});
