/**
 * Schedules on a SQLite file (docs/schedules.md), fired at injected times: one execution per due
 * time whichever runtimes fire, the catch-up and overlap policies, pause and resume, refusals,
 * and a leader supervisor firing on its own.
 */
import { Supervisor } from '@skein/worker-runtime-local';
import {
  defineSchedule,
  defineWorkflow,
  InvalidInputError,
  type ScheduleDefinition,
  type Stores,
  scheduledExecutionId,
  UnknownScheduleError,
} from '@skein/workflow-runtime';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { harness, until } from './support/sqlite.js';

const h = harness();

const job = defineWorkflow({
  name: 'job',
  input: z.object({ n: z.number() }),
  async run(ctx, input) {
    return ctx.step('work', () => input.n);
  },
});

const at = (ms: number) => scheduledExecutionId('s', ms);

function every(options: Partial<Parameters<typeof defineSchedule>[0]> = {}): ScheduleDefinition {
  return defineSchedule({ name: 's', everyMs: 1_000, workflow: job, input: { n: 1 }, ...options });
}

function runtimeOn(stores: Stores, schedule: ScheduleDefinition) {
  return h.runtime({ stores, workflows: [job], schedules: [schedule], lease: { ttlMs: 2_000 } });
}

async function ids(stores: Stores): Promise<string[]> {
  const page = await stores.events.listExecutions({ limit: 1_000 });
  return page.items.map((item) => item.executionId).sort();
}

describe('schedules on one SQLite file', () => {
  it('one execution per due time, whichever runtimes fire it and however often', async () => {
    const db = h.db();
    const a = runtimeOn(db.stores, every());
    const b = runtimeOn(db.connect(), every());
    await db.stores.schedules?.save(null, { name: 's', nextDueAt: 1_000, paused: false, revision: 1 });
    const fired = await Promise.all([a.fireSchedules(1_200), b.fireSchedules(1_200), a.fireSchedules(1_300)]);
    expect(fired.flat().every((id) => id === at(1_000))).toBe(true);
    expect(await ids(db.stores)).toEqual([at(1_000)]);
    expect(await b.fireSchedules(1_999)).toEqual([]);
    expect(await ids(db.stores)).toEqual([at(1_000)]);
    expect(at(1_000)).toBe('schedule:s:1970-01-01T00:00:01.000Z');
  });

  it('catchUp latest runs only the most recent missed due time; all runs each; none runs none', async () => {
    for (const [catchUp, expected] of [
      ['latest', [at(5_000)]],
      ['all', [at(1_000), at(2_000), at(3_000), at(4_000), at(5_000)]],
      ['none', []],
    ] as const) {
      const db = h.db();
      const runtime = runtimeOn(db.stores, every({ catchUp, overlap: 'allow' }));
      await db.stores.schedules?.save(null, { name: 's', nextDueAt: 1_000, paused: false, revision: 1 });
      expect((await runtime.fireSchedules(5_500)).sort()).toEqual(expected);
      expect(await db.stores.schedules?.get('s')).toMatchObject({ nextDueAt: 6_000 });
      // On time again: the next due time runs under every policy.
      expect(await runtime.fireSchedules(6_050)).toEqual([at(6_000)]);
    }
  });

  it('overlap skip: a due time while the last execution is unfinished does not run', async () => {
    const db = h.db();
    const runtime = runtimeOn(db.stores, every({ overlap: 'skip' }));
    await db.stores.schedules?.save(null, { name: 's', nextDueAt: 1_000, paused: false, revision: 1 });
    expect(await runtime.fireSchedules(1_000)).toEqual([at(1_000)]); // pending: nothing runs it here
    expect(await runtime.fireSchedules(2_000)).toEqual([]);
    await runtime.execute({ executionId: at(1_000), workflow: 'job' });
    expect(await runtime.fireSchedules(3_000)).toEqual([at(3_000)]);
    expect(await ids(db.stores)).toEqual([at(1_000), at(3_000)]);
  });

  it('overlap buffer-one: the first due time held back runs once the last one finishes; later ones are dropped', async () => {
    const db = h.db();
    const runtime = runtimeOn(db.stores, every({ overlap: 'buffer-one' }));
    await db.stores.schedules?.save(null, { name: 's', nextDueAt: 1_000, paused: false, revision: 1 });
    expect(await runtime.fireSchedules(1_000)).toEqual([at(1_000)]);
    expect(await runtime.fireSchedules(2_000)).toEqual([]);
    expect(await runtime.fireSchedules(3_000)).toEqual([]);
    expect(await db.stores.schedules?.get('s')).toMatchObject({ bufferedDueAt: 2_000 });
    await runtime.execute({ executionId: at(1_000), workflow: 'job' });
    expect(await runtime.fireSchedules(3_100)).toEqual([at(2_000)]);
    expect(await ids(db.stores)).toEqual([at(1_000), at(2_000)]);
  });

  it('overlap allow: due times run alongside an unfinished one', async () => {
    const db = h.db();
    const runtime = runtimeOn(db.stores, every({ overlap: 'allow' }));
    await db.stores.schedules?.save(null, { name: 's', nextDueAt: 1_000, paused: false, revision: 1 });
    await runtime.fireSchedules(1_000);
    expect(await runtime.fireSchedules(2_000)).toEqual([at(2_000)]);
  });

  it('pause stops every due time; resume goes on from the next one, skipping those passed while paused', async () => {
    const db = h.db();
    let now = 500;
    const runtime = h.runtime({
      stores: db.stores,
      workflows: [job],
      schedules: [every({ catchUp: 'all', overlap: 'allow' })],
      clock: () => now,
    });
    expect(await runtime.scheduleState('s')).toMatchObject({ nextDueAt: 1_000, paused: false });
    expect(await runtime.pauseSchedule('s')).toMatchObject({ paused: true });
    expect(await runtime.fireSchedules(4_000)).toEqual([]);
    now = 7_200;
    expect(await runtime.resumeSchedule('s')).toMatchObject({ paused: false, nextDueAt: 8_000 });
    expect(await runtime.fireSchedules(7_900)).toEqual([]);
    expect(await runtime.fireSchedules(8_000)).toEqual([scheduledExecutionId('s', 8_000)]);
    await expect(runtime.pauseSchedule('nope')).rejects.toThrow(UnknownScheduleError);
  });

  it('cron due times come from the pattern, in UTC by default', () => {
    const schedule = defineSchedule({ name: 'c', cron: '*/5 * * * * *', workflow: job, input: { n: 1 } });
    const t = Date.UTC(2026, 0, 1, 0, 0, 3);
    expect(schedule.dueAfter(t)).toBe(Date.UTC(2026, 0, 1, 0, 0, 5));
    expect(schedule.dueAfter(Date.UTC(2026, 0, 1, 0, 0, 5))).toBe(Date.UTC(2026, 0, 1, 0, 0, 10));
    const daily = defineSchedule({
      name: 'd',
      cron: '0 3 * * *',
      timezone: 'Europe/Paris',
      workflow: job,
      input: { n: 1 },
    });
    expect(daily.dueAfter(Date.UTC(2026, 5, 1, 12))).toBe(Date.UTC(2026, 5, 2, 1)); // 03:00 CEST
  });

  it('L7: a bad schedule is refused when it is defined', () => {
    const base = { name: 's', workflow: job, input: { n: 1 } };
    expect(() => defineSchedule({ ...base })).toThrow(/exactly one of cron and everyMs/);
    expect(() => defineSchedule({ ...base, cron: '* * * * *', everyMs: 5 })).toThrow(/exactly one/);
    expect(() => defineSchedule({ ...base, cron: 'not a cron' })).toThrow(/options\.cron/);
    expect(() => defineSchedule({ ...base, everyMs: 0 })).toThrow(/options\.everyMs/);
    expect(() => defineSchedule({ ...base, everyMs: 5, input: { n: 'x' } as never })).toThrow(
      InvalidInputError,
    );
    expect(() => defineSchedule({ ...base, everyMs: 5, overlap: 'queue' as never })).toThrow(
      /options\.overlap/,
    );
  });

  it('the leader supervisor fires due times and its nodes run them', async () => {
    const db = h.db();
    const schedule = defineSchedule({ name: 's', everyMs: 200, workflow: job, input: { n: 7 } });
    const runtime = runtimeOn(db.stores, schedule);
    const supervisor = new Supervisor({ runtime, stores: db.stores, tickIntervalMs: 20 });
    supervisor.start();
    try {
      await until(async () => {
        const done = await db.stores.events.listExecutions({ status: ['completed'] });
        return done.items.length >= 3;
      }, 10_000);
    } finally {
      await supervisor.stop();
    }
    for (const id of await ids(db.stores)) {
      expect(id).toMatch(/^schedule:s:/);
      expect(new Date(id.slice('schedule:s:'.length)).getTime() % 200).toBe(0);
    }
  });
});
