/**
 * crashAtEveryWrite: every write of an execution is crashed before and after, recovered by
 * fresh runtimes, and checked. The kit also fails where it must: an effect outside a step, an
 * output that depends on how often the body ran (caught only under a crash), and a snapshot
 * store that lies.
 */

import { CrashInvariantError, crashAt, crashAtEveryWrite, type Effects, referenceRun } from '@skein/testkit';
import {
  type AnyWorkflow,
  defineWorkflow,
  InvalidInputError,
  openMemoryStores,
  readHistory,
  type Stores,
} from '@skein/workflow-runtime';
import { MemorySnapshotStore } from '@skein/workflow-runtime/spi';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { order } from './workflows.js';

/** Memory stores that stay readable after the kit is done with them. */
function keptStores(): { open: () => Stores; opened: Stores[] } {
  const opened: Stores[] = [];
  return {
    opened,
    open: () => {
      const stores = openMemoryStores();
      opened.push(stores);
      return stores;
    },
  };
}

async function failureOf(promise: Promise<unknown>): Promise<CrashInvariantError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CrashInvariantError);
  return error as CrashInvariantError;
}

function twoSteps(effects: Effects, outside: boolean): AnyWorkflow {
  return defineWorkflow({
    name: 'two',
    version: 1,
    input: z.number(),
    async run(ctx, n) {
      const a = await ctx.step(
        'a',
        effects.track('a', () => n + 1),
      );
      if (outside) await effects.track('email', () => 'sent outside any step')({ attempt: 1 } as never);
      return ctx.step(
        'b',
        effects.track('b', () => a * 2),
      );
    },
  });
}

describe('crashAtEveryWrite', () => {
  it('order (sleep, retry, snapshots): every crash point recovers to the uncrashed output with L1–L3, L5, L6 and once-only steps', async () => {
    const report = await crashAtEveryWrite(order, { qty: 2 });
    expect(report.reference).toMatchObject({ status: 'completed', output: { hold: 'hold-2', charged: 20 } });
    expect(report.outcomes).toHaveLength(2 * report.writes);
    expect(new Set(report.outcomes.map((o) => o.op))).toEqual(
      // No events.acquireFence: a start uses fence 0 and a resume the newest fence (adr/0003, 0016).
      new Set(['events.append', 'snapshots.put', 'timers.schedule', 'timers.claim', 'timers.complete']),
    );
    expect(report.outcomes.every((o) => o.status === 'completed')).toBe(true);
    expect(report.outcomes.map((o) => `${o.k}${o.when}`)).toEqual(
      Array.from({ length: report.writes }, (_, k) => [`${k}before`, `${k}after`]).flat(),
    );
  });

  it('a crash right after the append that started "reserve": recovery takes a new fence and runs reserve again', async () => {
    const stores = keptStores();
    const reference = await referenceRun(order, { qty: 1 });
    expect(reference.writes[0]).toBe('events.append');
    const outcome = await crashAt(
      order,
      { qty: 1 },
      { k: 0, when: 'after' },
      { reference, openStores: stores.open },
    );
    expect(outcome).toMatchObject({ op: 'events.append', eventsAtCrash: 2, status: 'completed' });
    const log = await readHistory(stores.opened[0]!.events, 'crash-test');
    expect(log.slice(0, 4).map((e) => `${e.type}@${e.fence}`)).toEqual([
      'EXECUTION_STARTED@0',
      'STEP_STARTED@0',
      'EXECUTION_RECOVERED@1',
      'STEP_STARTED@1',
    ]);
    expect(
      log.filter((e) => e.type === 'STEP_STARTED' && (e.payload as { name: string }).name === 'reserve'),
    ).toHaveLength(2);
  });

  it('the kit fails: a tracked effect that runs outside any step is reported in the uncrashed run', async () => {
    expect((await crashAtEveryWrite((effects) => twoSteps(effects, false), 1)).reference.output).toBe(4);
    const error = await failureOf(crashAtEveryWrite((effects) => twoSteps(effects, true), 1));
    expect(error.point).toBeNull();
    expect(error.violations).toEqual([
      {
        invariant: 'effects',
        message:
          'step "email" attempt 1 ran 1 time(s) (1 before the crash); the log finished it 0 time(s), so it may run 0',
      },
    ]);
    expect(error.message).toMatch(/^uncrashed run of execution "crash-test": effects violated/);
  });

  it('the kit fails: an output that counts how often the body ran differs after a crash, named by k', async () => {
    const counting = () => {
      let bodies = 0;
      return defineWorkflow({
        name: 'counting',
        version: 1,
        input: z.null(),
        async run(ctx) {
          bodies += 1;
          await ctx.step('only', () => 1);
          return bodies;
        },
      });
    };
    const error = await failureOf(crashAtEveryWrite(counting, null));
    expect(error.point).toEqual({ k: 0, when: 'before' });
    expect(error.violations.map((v) => v.invariant)).toEqual(['output']);
    expect(error.message).toMatch(
      /^crash before write 0 \(events\.append\) of execution "crash-test": output violated/,
    );
    expect(error.message).toContain("output 2 differs from the uncrashed run's 1");
  });

  it('the kit fails: a snapshot store that serves a stale snapshot breaks L5, already in the uncrashed run', async () => {
    class StaleSnapshots extends MemorySnapshotStore {
      override async put(snapshot: { executionId: string; seq: number; state: string }): Promise<void> {
        const first = await this.latest(snapshot.executionId);
        await super.put(first === null ? snapshot : { ...first, seq: snapshot.seq });
      }
    }
    const openStores = () => ({ ...openMemoryStores(), snapshots: new StaleSnapshots() });
    const error = await failureOf(crashAtEveryWrite(order, { qty: 1 }, { openStores }));
    expect(error.point).toBeNull();
    expect(error.violations.map((v) => v.invariant)).toContain('L5');
    expect(error.message).toMatch(
      /^uncrashed run of execution "crash-test": .*L5 violated: fold from the snapshot at seq \d+/,
    );
  });

  it('a workflow that fails is compared as failed; only "before" crashes when asked', async () => {
    const failing = (effects: Effects) =>
      defineWorkflow({
        name: 'failing',
        version: 1,
        input: z.null(),
        async run(ctx) {
          await ctx.step(
            'doomed',
            effects.track('doomed', () => Promise.reject(new Error('no'))),
            {
              retry: { maxAttempts: 2, initialMs: 1 },
            },
          );
        },
      });
    const report = await crashAtEveryWrite(failing, null, { when: ['before'], snapshotEvery: 0 });
    expect(report.reference.status).toBe('failed');
    expect(report.outcomes).toHaveLength(report.writes);
    expect(report.outcomes.every((o) => o.status === 'failed' && o.when === 'before')).toBe(true);
  });

  it('bad options, a bad workflow and a crash point out of range are refused before anything runs', async () => {
    await expect(crashAtEveryWrite(order, { qty: 1 }, { snapshotEvery: -1 })).rejects.toThrow(
      /options\.snapshotEvery/,
    );
    await expect(crashAtEveryWrite(order, { qty: 1 }, { when: [] })).rejects.toThrow(InvalidInputError);
    await expect(crashAtEveryWrite(42 as never, {})).rejects.toThrow(/workflow/);
    await expect(crashAt(order, { qty: 1 }, { k: 999, when: 'before' })).rejects.toThrow(
      /crashAt is invalid: point\.k: must be an integer in 0\.\.\d+, got 999/,
    );
    await expect(crashAt(order, { qty: 1 }, { k: 0, when: 'during' as never })).rejects.toThrow(
      InvalidInputError,
    );
  });
});
