import { Supervisor, SupervisorTickError } from '@skein/worker-runtime-local';
import { defineWorkflow, type EndedPayload, InvalidInputError, type Runtime } from '@skein/workflow-runtime';
import { executionLeaseKey } from '@skein/workflow-runtime/internal';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  count,
  deferred,
  harness,
  manualClock,
  PoisonEventStore,
  types,
  until,
  watchedLeases,
  withEvents,
} from './support/sqlite.js';

const h = harness();
const effects = new Map<string, number>();
const ran = (key: string) => effects.set(key, (effects.get(key) ?? 0) + 1);
let gate = deferred();

const quick = defineWorkflow({
  name: 'quick',
  input: z.object({}),
  async run(ctx) {
    return ctx.step('only', ({ executionId }) => {
      ran(executionId);
      return 'done';
    });
  },
});
const twoSteps = defineWorkflow({
  name: 'two-steps',
  input: z.object({}),
  async run(ctx) {
    await ctx.step('first', ({ executionId }) => void ran(`${executionId}:first`));
    return ctx.step('second', async ({ executionId }) => {
      ran(`${executionId}:second`);
      await gate.promise;
      return 'done';
    });
  },
});
let failOnce = true;
const sleepy = defineWorkflow({
  name: 'sleepy',
  input: z.object({}),
  async run(ctx) {
    await ctx.sleep('nap', 1_000);
    return ctx.step(
      'flaky',
      () => {
        if (failOnce) {
          failOnce = false;
          throw new Error('try again later');
        }
        return 'woke';
      },
      { retry: { maxAttempts: 2, initialMs: 500 } },
    );
  },
});
const workflows = [quick, twoSteps, sleepy];
const TTL = 1_000;

function supervised(stores: ReturnType<ReturnType<typeof h.db>['connect']>, clock: () => number, extra = {}) {
  const runtime = h.runtime({ stores, workflows, clock, lease: { ttlMs: TTL } });
  const supervisor = new Supervisor({
    runtime,
    stores,
    leaseTtlMs: TTL,
    tickIntervalMs: 100,
    clock,
    ...extra,
  });
  return { runtime, supervisor };
}

describe('Supervisor tick', () => {
  it('claims unowned pending executions up to its concurrency and runs them', async () => {
    const db = h.db();
    const clock = manualClock();
    const { runtime, supervisor } = supervised(db.stores, clock.now, { concurrency: 2 });
    for (const id of ['p1', 'p2', 'p3']) await runtime.enqueue(quick, {}, { executionId: id });
    const first = await supervisor.tick();
    expect(first.claimed).toEqual(['p1', 'p2']);
    await supervisor.idle();
    const second = await supervisor.tick();
    expect(second.claimed).toEqual(['p3']);
    await supervisor.idle();
    for (const id of ['p1', 'p2', 'p3']) {
      expect(types(await runtime.history(id))).toEqual([
        'EXECUTION_STARTED',
        'EXECUTION_RECOVERED',
        'STEP_STARTED',
        'STEP_COMPLETED',
        'EXECUTION_COMPLETED',
      ]);
      expect(effects.get(id)).toBe(1);
      expect(await db.stores.leases.get(executionLeaseKey(id))).toBeNull();
    }
    expect((await supervisor.tick()).claimed).toEqual([]);
  });

  it('claims the pending executions of a tick side by side, skipping one another node holds', async () => {
    const db = h.db();
    const clock = manualClock();
    const { stores, calls } = watchedLeases(db.stores);
    const { runtime, supervisor } = supervised(stores, clock.now, { concurrency: 8 });
    const ids = Array.from({ length: 6 }, (_, i) => `side-${i}`);
    for (const id of ids) await runtime.enqueue(quick, {}, { executionId: id });
    await db.stores.leases.claim(executionLeaseKey('side-2'), 'another-node', TTL, clock.now());
    const report = await supervisor.tick();
    expect(report.claimed).toEqual(ids.filter((id) => id !== 'side-2'));
    expect(calls.mostClaimsAtOnce).toBeGreaterThanOrEqual(5);
    await supervisor.idle();
    for (const id of report.claimed) expect(effects.get(id)).toBe(1);
    expect(effects.get('side-2')).toBeUndefined();
    expect((await db.stores.events.getExecution('side-2'))?.status).toBe('pending');
  });

  it('a claimed run shorter than a third of the TTL writes no lease of its own: one claim and one release per run', async () => {
    const db = h.db();
    const clock = manualClock();
    const { stores, calls } = watchedLeases(db.stores);
    const { runtime, supervisor } = supervised(stores, clock.now, { concurrency: 4 });
    const unknown = defineWorkflow({ name: 'unknown-here', input: z.object({}), run: async () => 'never' });
    const elsewhere = h.runtime({ stores: db.stores, workflows: [unknown], clock: clock.now });
    await runtime.enqueue(quick, {}, { executionId: 'once-1' });
    await runtime.enqueue(quick, {}, { executionId: 'once-2' });
    await elsewhere.enqueue(unknown, {}, { executionId: 'cannot-run' });
    expect((await supervisor.tick()).claimed).toEqual(['cannot-run', 'once-1', 'once-2']);
    await supervisor.idle();
    const keys = ['cannot-run', 'once-1', 'once-2'].map(executionLeaseKey);
    expect(calls.claim.filter((key) => key !== 'supervisor:leader').sort()).toEqual(keys);
    expect(calls.release.sort()).toEqual(keys);
    for (const key of keys) expect(await db.stores.leases.get(key)).toBeNull();
    expect((await db.stores.events.getExecution('cannot-run'))?.status).toBe('pending');
    expect((await supervisor.tick()).errors.map(([id]) => id)).toEqual(['cannot-run']);
  });

  it('fires due timers: a sleep and a step retry survive the process that scheduled them', async () => {
    const db = h.db();
    const clock = manualClock();
    const gone = h.runtime({ stores: db.stores, workflows, clock: clock.now, lease: { ttlMs: TTL } });
    await gone.start(sleepy, {}, { executionId: 'nap-1' });
    await until(async () => (await gone.loadState('nap-1'))?.status === 'suspended');
    await gone.close(); // its in-process wake-ups die with it

    const { runtime, supervisor } = supervised(db.connect(), clock.now);
    clock.advance(1_000);
    const woke = await supervisor.tick();
    expect(woke.timersFired).toBe(1);
    await supervisor.idle();
    expect((await runtime.loadState('nap-1'))?.status).toBe('suspended'); // the retry waits
    clock.advance(10_000);
    expect((await supervisor.tick()).timersFired).toBe(1);
    await supervisor.idle();
    const log = await runtime.history('nap-1');
    expect(count(log, 'TIMER_FIRED')).toBe(2);
    expect(count(log, 'STEP_FAILED')).toBe(1);
    expect(types(log).at(-1)).toBe('EXECUTION_COMPLETED');
    expect(await db.stores.timers.forExecution('nap-1')).toEqual([]);
  });

  it('recovers an execution whose lease expired; completed steps are not re-run', async () => {
    gate = deferred();
    const db = h.db();
    const frozen = manualClock();
    const owner = h.runtime({ stores: db.stores, workflows, clock: frozen.now, lease: { ttlMs: TTL } });
    await owner.start(twoSteps, {}, { executionId: 'orphan-1' });
    await until(() => effects.get('orphan-1:second') === 1);
    await until(async () => (await db.stores.leases.get(executionLeaseKey('orphan-1'))) !== null);
    // The owner stops renewing in time: its clock stands still while the world's moves on.
    const clock = manualClock(frozen.now() + TTL + 1);
    const { runtime, supervisor } = supervised(db.connect(), clock.now);
    const report = await supervisor.tick();
    expect(report.leader).toBe(true);
    expect(report.recovered).toEqual(['orphan-1']);
    await until(() => effects.get('orphan-1:second') === 2);
    gate.resolve();
    await supervisor.idle();
    const log = await runtime.history('orphan-1');
    expect(count(log, 'EXECUTION_RECOVERED')).toBe(1);
    expect(types(log).at(-1)).toBe('EXECUTION_COMPLETED');
    expect(effects.get('orphan-1:first')).toBe(1);
    expect(await owner.history('orphan-1')).toHaveLength(log.length);
  });

  it('dead-letters a poison execution after tickFailureDeadlineMs while the others progress in every tick', async () => {
    const db = h.db();
    const clock = manualClock();
    const events = new PoisonEventStore(db.stores.events);
    const stores = withEvents(db.stores, events);
    const { runtime, supervisor } = supervised(stores, clock.now, {
      concurrency: 2,
      tickFailureDeadlineMs: 5_000,
    });
    await runtime.enqueue(quick, {}, { executionId: 'a-poison' });
    const healthy = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'];
    for (const id of healthy) await runtime.enqueue(quick, {}, { executionId: id });
    events.poisoned.add('a-poison');
    const progressed: string[][] = [];
    for (let i = 0; i < 3; i++) {
      const report = await supervisor.tick();
      expect(report.deadLettered).toEqual([]);
      if (i > 0) expect(report.errors.map(([id]) => id)).toEqual(['a-poison']);
      progressed.push(report.claimed.filter((id) => id !== 'a-poison'));
      await supervisor.idle();
      clock.advance(2_000);
    }
    // Every tick retried the poison and still claimed healthy work (at most concurrency at once).
    for (const claimed of progressed) expect(claimed.length).toBeGreaterThan(0);
    expect(progressed.flat()).toEqual(healthy.slice(0, progressed.flat().length));
    const report = await supervisor.tick();
    expect(report.deadLettered).toEqual(['a-poison']);
    const log = await db.stores.events.read('a-poison');
    expect(log.map((e) => e.type)).toEqual(['EXECUTION_STARTED', 'EXECUTION_DEAD_LETTERED']);
    const runtimeReader = h.runtime({ stores: db.stores, workflows, maintenance: false });
    const ended = (await runtimeReader.history('a-poison'))[1]!.payload as EndedPayload;
    expect(ended.reason).toMatch(
      /^supervisor tick: run of a claimed pending execution of execution "a-poison"/,
    );
    expect(ended.reason).toContain('tickFailureDeadlineMs (5000 ms)');
    expect(await db.stores.leases.get(executionLeaseKey('a-poison'))).toBeNull();
    await supervisor.idle();
    while ((await supervisor.tick()).claimed.length > 0) await supervisor.idle();
    for (const id of healthy) expect((await runtime.loadState(id))?.status).toBe('completed');
  });

  it('a failure that heals before the deadline dead-letters nothing', async () => {
    const db = h.db();
    const clock = manualClock();
    const events = new PoisonEventStore(db.stores.events);
    const { runtime, supervisor } = supervised(withEvents(db.stores, events), clock.now, {
      tickFailureDeadlineMs: 5_000,
    });
    await runtime.enqueue(quick, {}, { executionId: 'heals-1' });
    events.poisoned.add('heals-1');
    await supervisor.tick();
    await supervisor.idle();
    clock.advance(4_000);
    events.poisoned.delete('heals-1');
    const healed = await supervisor.tick();
    expect(healed.errors.map(([id]) => id)).toEqual(['heals-1']); // the earlier failure, reported
    await supervisor.idle();
    clock.advance(10_000);
    expect((await supervisor.tick()).deadLettered).toEqual([]);
    const log = await runtime.history('heals-1');
    expect(count(log, 'EXECUTION_DEAD_LETTERED')).toBe(0);
    expect(types(log).at(-1)).toBe('EXECUTION_COMPLETED');
  });

  it('a tick-wide failure (listing fails) fails the tick, naming the phase, and the next tick runs', async () => {
    const db = h.db();
    const clock = manualClock();
    const events = new PoisonEventStore(db.stores.events);
    const { runtime, supervisor } = supervised(withEvents(db.stores, events), clock.now);
    await runtime.enqueue(quick, {}, { executionId: 'later-1' });
    events.failListing = 1;
    const error = await supervisor.tick().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SupervisorTickError);
    expect((error as SupervisorTickError).phase).toBe('list pending executions');
    expect(((error as Error).cause as Error).message).toContain('simulated outage');
    expect((await supervisor.tick()).claimed).toEqual(['later-1']);
    await supervisor.idle();
    expect((await runtime.loadState('later-1'))?.status).toBe('completed');
  });
});

describe('Supervisor leader lease', () => {
  it('of two supervisors on one store only one runs the maintenance; when it dies the other takes over within one TTL', async () => {
    const db = h.db();
    const clock = manualClock();
    const a = supervised(db.stores, clock.now);
    const b = supervised(db.connect(), clock.now);
    expect((await a.supervisor.tick()).leader).toBe(true);
    const follower = await b.supervisor.tick();
    expect(follower).toMatchObject({ leader: false, timersFired: 0, recovered: [], deadLettered: [] });
    clock.advance(TTL - 1);
    expect((await b.supervisor.tick()).leader).toBe(false);
    // a dies (stops ticking, keeps its lease row); after one TTL b leads.
    clock.advance(1);
    expect((await b.supervisor.tick()).leader).toBe(true);
    expect((await a.supervisor.tick()).leader).toBe(false);
  });

  it('start() ticks until stop(), which gives up the leader lease', async () => {
    const db = h.db();
    const { runtime, supervisor } = supervised(db.stores, Date.now);
    await runtime.enqueue(quick, {}, { executionId: 'bg-1' });
    supervisor.start();
    await until(async () => (await runtime.loadState('bg-1'))?.status === 'completed');
    await supervisor.stop();
    expect(await db.stores.leases.get('supervisor:leader')).toBeNull();
  });

  it.each([
    ['the default leader key', undefined],
    ['a custom leader key', 'team-a:leader'],
  ])(
    'a runtime’s in-process maintenance skips its pass while a Supervisor with %s leads',
    async (_, leaderKey) => {
      const db = h.db();
      // The supervised node runs other work; the plain runtime on the same file runs `quick`.
      const node = h.runtime({ stores: db.stores, workflows: [twoSteps], lease: { ttlMs: 10_000 } });
      const supervisor = new Supervisor({
        runtime: node,
        stores: db.stores,
        ...(leaderKey === undefined ? {} : { leaderKey }),
      });
      expect((await supervisor.tick()).leader).toBe(true);
      const stores = db.connect();
      const plain = h.runtime({ stores, workflows: [quick], maintenance: { intervalMs: 20_000 } });
      const pending = await plain.enqueue(quick, {}, { executionId: 'led' });
      expect(await plain.maintain()).toEqual({ claimed: [], recovered: [], woken: [] });
      expect((await pending.state())?.status).toBe('pending');
      // The supervisor stops and gives its leases up: the next pass does the work.
      await supervisor.stop();
      expect((await plain.maintain())?.claimed).toEqual(['led']);
      expect(await pending.result()).toBe('done');
      expect(h.backgroundErrors).toEqual([]);
    },
  );

  it('ticks asked for by freed slots claim pending work without walking the running executions again', async () => {
    const db = h.db();
    const { stores, calls } = watchedLeases(db.stores);
    // Five executions some live node is running, quiet (no event within the TTL, so a walk
    // reads their rows, adr/0091) and holding their leases: each walk reads their five leases.
    const quietSince = Date.now() - 120_000;
    for (let i = 0; i < 5; i++) {
      await db.stores.leases.claim(executionLeaseKey(`busy-${i}`), 'live-node', 60_000, Date.now());
      await db.stores.events.append({
        executionId: `busy-${i}`,
        workflow: quick.name,
        expectedSeq: 0,
        fence: 0,
        events: [
          {
            envelopeId: `busy-${i}-0`,
            type: 'EXECUTION_STARTED',
            payload: '{"input":{}}',
            recordedAt: quietSince,
          },
          {
            envelopeId: `busy-${i}-1`,
            type: 'STEP_STARTED',
            payload: '{"position":0}',
            recordedAt: quietSince,
          },
        ],
      });
    }
    const runtime = h.runtime({ stores, workflows, lease: { ttlMs: 60_000 } });
    // One slot and a 30 s poll: after the first tick, only freed slots ask for ticks.
    const supervisor = new Supervisor({
      runtime,
      stores,
      leaseTtlMs: 60_000,
      tickIntervalMs: 30_000,
      concurrency: 1,
    });
    const ids = Array.from({ length: 10 }, (_, i) => `queued-${i}`);
    for (const id of ids) await runtime.enqueue(quick, {}, { executionId: id });
    supervisor.start();
    await until(async () =>
      (await Promise.all(ids.map((id) => runtime.loadState(id)))).every((s) => s?.status === 'completed'),
    );
    await supervisor.stop();
    expect(calls.get).toHaveLength(5);
    for (let i = 0; i < 5; i++)
      expect((await db.stores.events.getExecution(`busy-${i}`))?.status).toBe('running');
  });

  it('L7: a runtime without leases, or bad options, are refused with the field named', () => {
    const db = h.db();
    const runtime: Runtime = h.runtime({ stores: db.stores, workflows, maintenance: false });
    expect(() => new Supervisor({ runtime, stores: db.stores })).toThrow(InvalidInputError);
    expect(() => new Supervisor({ runtime, stores: db.stores })).toThrow(
      /runtime: must keep execution leases/,
    );
    const leased = h.runtime({ stores: db.stores, workflows, lease: { ttlMs: 100 } });
    expect(() => new Supervisor({ runtime: leased, stores: db.stores, tickIntervalMs: 100 })).toThrow(
      /tickIntervalMs/,
    );
    expect(
      () => new Supervisor({ runtime: leased, stores: db.stores, tickIntervalMs: 10, concurrency: 0 }),
    ).toThrow(/concurrency/);
  });
});

describe('Supervisor onError', () => {
  it('an onError that throws does not stop start(): failed ticks are reported and later ticks still claim work', async () => {
    const db = h.db();
    const events = new PoisonEventStore(db.stores.events);
    const stores = withEvents(db.stores, events);
    const runtime = h.runtime({ stores, workflows, lease: { ttlMs: TTL } });
    const reported: string[] = [];
    const supervisor = new Supervisor({
      runtime,
      stores,
      leaseTtlMs: TTL,
      tickIntervalMs: 20,
      onError: (_error, context) => {
        reported.push(context);
        throw new Error('a broken error handler');
      },
    });
    events.failListing = 2;
    const quiet = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      supervisor.start();
      await expect.poll(() => reported.filter((c) => c === 'supervisor tick').length).toBe(2);
      await runtime.enqueue(quick, {}, { executionId: 'after-throw' });
      await expect.poll(async () => (await runtime.loadState('after-throw'))?.status).toBe('completed');
      expect(quiet).toHaveBeenCalledWith(
        "skein: the supervisor's onError threw while reporting supervisor tick:",
        expect.any(Error),
        expect.any(SupervisorTickError),
      );
    } finally {
      await supervisor.stop();
      quiet.mockRestore();
    }
  });
});
