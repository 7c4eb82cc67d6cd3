/**
 * docs/architecture.md#executing: an interrupted execution continues from its log. Completed steps return their
 * recorded output without running; only the step in flight runs again; the old writer is
 * fenced out; code that no longer matches the log is refused with NonDeterminismError.
 */
import {
  type AnyWorkflow,
  defineWorkflow,
  type Envelope,
  NonDeterminismError,
  StaleFenceError,
  type Stores,
} from '@skein/workflow-runtime';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
  backings,
  CrashingEventStore,
  deferred,
  type Harness,
  harness,
  types,
  untilLogHas,
  withEvents,
} from './support/stores.js';

/** Run `workflow` until the process "dies" before append `appendsAllowed + 1`; return the log it left. */
async function interruptedRun(
  h: Harness,
  stores: Stores,
  workflow: AnyWorkflow,
  executionId: string,
  input: unknown,
  appendsAllowed: number,
): Promise<Envelope[]> {
  const crashing = new CrashingEventStore(stores.events, appendsAllowed);
  const doomed = h.runtime({ stores: withEvents(stores, crashing), workflows: [workflow] });
  await expect(doomed.execute({ executionId, workflow: workflow.name, input })).rejects.toThrow(
    /simulated crash/,
  );
  await doomed.close();
  return doomed.history(executionId);
}

function startedNotCompleted(log: readonly Envelope[]): string[] {
  const started = log
    .filter((e) => e.type === 'STEP_STARTED')
    .map((e) => (e.payload as { name: string }).name);
  const completed = new Set(
    log
      .filter((e) => e.type === 'STEP_COMPLETED' && (e.payload as { kind: string }).kind === 'step')
      .map((e) => (e.payload as { name: string }).name),
  );
  return [...new Set(started)].filter((name) => !completed.has(name));
}

describe.each(backings)('replay and recovery (%s store)', (_, open) => {
  const h = harness(open);

  function pipeline() {
    const effects = new Map<string, number>();
    const effect =
      <T>(name: string, value: T) =>
      (): T => {
        effects.set(name, (effects.get(name) ?? 0) + 1);
        return value;
      };
    const workflow = defineWorkflow({
      name: 'pipeline',
      input: z.object({ base: z.number() }),
      async run(ctx, input) {
        const a = await ctx.step('one', effect('one', input.base + 1));
        const at = ctx.now();
        const b = await ctx.step('two', effect('two', a * 2));
        const c = await ctx.step('three', effect('three', b + 3));
        const d = await ctx.step('four', effect('four', c * 10));
        return { d, at: at.getTime() };
      },
    });
    return { workflow, effects };
  }

  test('crash at every write boundary: completed steps never run again, the interrupted one runs once more', async () => {
    const clean = pipeline();
    const { stores } = h.open();
    const counter = new CrashingEventStore(stores.events, Number.POSITIVE_INFINITY);
    const reference = h.runtime({ stores: withEvents(stores, counter), workflows: [clean.workflow] });
    const expected = await reference.execute({
      executionId: 'clean',
      workflow: 'pipeline',
      input: { base: 1 },
    });
    expect(expected.output).toMatchObject({ d: 70 });
    const boundaries = counter.appends;
    expect(boundaries).toBe(5);

    for (let k = 0; k < boundaries; k++) {
      const { workflow, effects } = pipeline();
      const id = `crash-at-${k}`;
      const prefix = await interruptedRun(h, stores, workflow, id, { base: 1 }, k);
      expect(prefix.length > 0).toBe(k > 0);
      const interrupted = startedNotCompleted(prefix);
      expect(interrupted.length).toBeLessThanOrEqual(1);

      const survivor = h.runtime({ stores, workflows: [workflow] });
      const state = await survivor.execute({ executionId: id, workflow: 'pipeline', input: { base: 1 } });

      expect(state.status).toBe('completed');
      expect((state.output as { d: number }).d).toBe(70);
      for (const name of ['one', 'two', 'three', 'four']) {
        expect({ k, name, runs: effects.get(name) }).toEqual({
          k,
          name,
          runs: interrupted.includes(name) ? 2 : 1,
        });
      }
      const log = await survivor.history(id);
      expect(log.slice(0, prefix.length).map((e) => e.envelopeId)).toEqual(prefix.map((e) => e.envelopeId));
      expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i));
      expect(types(log).filter((t) => t === 'EXECUTION_RECOVERED')).toHaveLength(prefix.length === 0 ? 0 : 1);
      expect(types(log).filter((t) => t === 'EXECUTION_STARTED')).toHaveLength(1);
    }
  });

  test('a live writer is fenced out by the takeover: its late write fails with StaleFenceError and writes nothing', async () => {
    const { stores } = h.open();
    const gate = deferred();
    const effects: string[] = [];
    const slow = defineWorkflow({
      name: 'slow',
      input: z.null(),
      async run(ctx) {
        await ctx.step('before', () => effects.push('before'));
        await ctx.step('stuck', async () => {
          effects.push('stuck');
          await gate.promise;
          return 'done';
        });
        await ctx.step('after', () => effects.push('after'));
        return 'finished';
      },
    });
    const a = h.runtime({ stores, workflows: [slow] });
    const b = h.runtime({ stores, workflows: [slow] });
    const first = a.execute({ executionId: 'slow-1', workflow: 'slow', input: null });
    first.catch(() => undefined);
    await untilLogHas(a, 'slow-1', 'STEP_STARTED', 2);

    const takeover = b.execute({ executionId: 'slow-1', workflow: 'slow', input: null });
    await untilLogHas(b, 'slow-1', 'EXECUTION_RECOVERED');
    gate.resolve();
    const state = await takeover;
    expect(state.status).toBe('completed');
    const completedLog = await b.history('slow-1');

    const fenced = await first.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(fenced).toBeInstanceOf(StaleFenceError);
    expect(fenced).toMatchObject({ executionId: 'slow-1', current: state.fence });
    expect((fenced as StaleFenceError).fence).toBeLessThan(state.fence);
    expect((await b.history('slow-1')).map((e) => e.envelopeId)).toEqual(
      completedLog.map((e) => e.envelopeId),
    );
    // "before" ran once; "stuck" ran in both writers; "after" only in the one that holds the fence.
    expect(effects.sort()).toEqual(['after', 'before', 'stuck', 'stuck']);
    expect(types(completedLog).filter((t) => t === 'EXECUTION_RECOVERED')).toHaveLength(1);
  });

  test('ctx.now(), ctx.random() and ctx.uuid() return their recorded values on replay', async () => {
    const { stores } = h.open();
    const observed = defineWorkflow({
      name: 'observed',
      input: z.null(),
      async run(ctx) {
        const values = { now: ctx.now().getTime(), random: ctx.random(), uuid: ctx.uuid() };
        await ctx.step('use', () => values.uuid);
        return values;
      },
    });
    const prefix = await interruptedRun(h, stores, observed, 'obs-1', null, 1);
    const recorded = prefix
      .filter((e) => e.type === 'STEP_COMPLETED')
      .map((e) => (e.payload as { kind: string; output: unknown }).output);
    expect(recorded).toHaveLength(3);
    const [now, random, uuid] = recorded as [Date, number, string];

    const later = h.runtime({ stores, workflows: [observed], clock: () => now.getTime() + 3_600_000 });
    const state = await later.execute({ executionId: 'obs-1', workflow: 'observed', input: null });
    expect(state.output).toEqual({ now: now.getTime(), random, uuid });
    expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const log = await later.history('obs-1');
    expect(
      log.filter((e) => e.type === 'STEP_COMPLETED' && (e.payload as { kind: string }).kind !== 'step'),
    ).toHaveLength(3);
  });

  describe('NonDeterminismError names the position, what the log holds and what the code did', () => {
    const v1 = defineWorkflow({
      name: 'evolving',
      input: z.null(),
      async run(ctx) {
        await ctx.step('charge', () => 'charged');
        await ctx.step('ship', () => 'shipped');
        await ctx.step('notify', () => 'notified');
        return 'v1';
      },
    });

    async function replayWith(changed: AnyWorkflow, id: string) {
      const { stores } = h.open();
      const prefix = await interruptedRun(h, stores, v1, id, null, 2);
      expect(types(prefix)).toEqual(['EXECUTION_STARTED', 'STEP_STARTED', 'STEP_COMPLETED', 'STEP_STARTED']);
      const runtime = h.runtime({ stores, workflows: [changed] });
      const error = await runtime.execute({ executionId: id, workflow: 'evolving', input: null }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(NonDeterminismError);
      const log = await runtime.history(id);
      expect(log.map((e) => e.envelopeId)).toEqual(prefix.map((e) => e.envelopeId));
      return error as NonDeterminismError;
    }

    test('a different step name at a position', async () => {
      const renamed = defineWorkflow({
        name: 'evolving',
        input: z.null(),
        async run(ctx) {
          await ctx.step('authorize', () => 'authorized');
          return 'v2';
        },
      });
      const error = await replayWith(renamed, 'nd-name');
      expect(error).toMatchObject({
        position: 0,
        logged: { kind: 'step', name: 'charge' },
        called: { kind: 'step', name: 'authorize' },
      });
      expect(error.message).toBe(
        'execution "nd-name": at position 0 the log holds step "charge" but the code called step "authorize"',
      );
    });

    test('a different kind of call at a position', async () => {
      const slept = defineWorkflow({
        name: 'evolving',
        input: z.null(),
        async run(ctx) {
          await ctx.step('charge', () => 'charged');
          await ctx.sleep('ship', 10);
          return 'v2';
        },
      });
      const error = await replayWith(slept, 'nd-kind');
      expect(error).toMatchObject({
        position: 1,
        logged: { kind: 'step', name: 'ship' },
        called: { kind: 'sleep' },
      });
      expect(error.message).toMatch(/position 1 the log holds step "ship" but the code called sleep "ship"/);
    });

    test('code that returns before the end of the log', async () => {
      const shorter = defineWorkflow({
        name: 'evolving',
        input: z.null(),
        async run(ctx) {
          await ctx.step('charge', () => 'charged');
          return 'v2';
        },
      });
      const error = await replayWith(shorter, 'nd-short');
      expect(error).toMatchObject({
        position: 1,
        logged: { kind: 'step', name: 'ship' },
        called: { kind: 'return' },
      });
      expect(error.message).toMatch(/position 1 the log holds step "ship" but the code called return/);
    });

    test('the same code replays without complaint (the checks are not vacuous in the other direction)', async () => {
      const { stores } = h.open();
      await interruptedRun(h, stores, v1, 'nd-same', null, 2);
      const runtime = h.runtime({ stores, workflows: [v1] });
      const state = await runtime.execute({ executionId: 'nd-same', workflow: 'evolving', input: null });
      expect(state.status).toBe('completed');
      expect(state.output).toBe('v1');
    });
  });
});
