/**
 * L5: snapshots are a cache. fold(snapshot + later events) equals fold(all events); deleting
 * every snapshot changes no result; and loadState reads only the events after the newest one.
 */
import {
  defineWorkflow,
  type ExecutionState,
  fold,
  loadState,
  type SnapshotStore,
  type Stores,
} from '@skein/workflow-runtime';
import { decode, encode } from '@skein/workflow-runtime/internal';
import type { Snapshot } from '@skein/workflow-runtime/spi';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { backings, CountingEventStore, CrashingEventStore, harness, types } from './support/stores.js';

/** A snapshot store that keeps every snapshot put into it, besides delegating. */
class RecordingSnapshotStore implements SnapshotStore {
  readonly puts: Snapshot[] = [];
  constructor(private readonly inner: SnapshotStore) {}
  put: SnapshotStore['put'] = async (snapshot) => {
    this.puts.push(snapshot);
    await this.inner.put(snapshot);
  };
  latest: SnapshotStore['latest'] = (id) => this.inner.latest(id);
  delete: SnapshotStore['delete'] = (id) => this.inner.delete(id);
}

function withSnapshots(stores: Stores, snapshots: SnapshotStore, events = stores.events): Stores {
  return {
    events,
    snapshots,
    timers: stores.timers,
    leases: stores.leases,
    signals: stores.signals,
    close: () => undefined,
  };
}

const STEPS = 100;

describe.each(backings)('snapshots (%s store)', (_, open) => {
  const h = harness(open);

  /** 100 steps (2 events each) plus recorded values, a patch, a zero sleep and a retried step: 200+ events. */
  function long() {
    const runs = new Map<string, number>();
    const workflow = defineWorkflow({
      name: 'long',
      input: z.object({ seed: z.number() }),
      async run(ctx, input) {
        let total = input.seed;
        const patched = ctx.patched('bigger-steps');
        await ctx.sleep('breathe', 0);
        for (let i = 0; i < STEPS; i++) {
          total = await ctx.step(
            `add-${i}`,
            (info) => {
              runs.set(`add-${i}`, (runs.get(`add-${i}`) ?? 0) + 1);
              if (i === 30 && info.attempt === 1) throw new Error('transient');
              return total + i;
            },
            { retry: { maxAttempts: 2, initialMs: 1 } },
          );
          if (i % 20 === 0) ctx.random();
        }
        return { total, patched, at: ctx.now().getTime() };
      },
    });
    return { workflow, runs };
  }

  test('L5: a long run writes snapshots, and each equals the fold of the log up to its seq', async () => {
    const { stores } = h.open();
    const recording = new RecordingSnapshotStore(stores.snapshots);
    const { workflow } = long();
    const runtime = h.runtime({
      stores: withSnapshots(stores, recording),
      workflows: [workflow],
      snapshotEvery: 10,
    });
    const output = await (await runtime.start(workflow, { seed: 1 }, { executionId: 'long-1' })).result();
    expect(output).toMatchObject({ total: 1 + (STEPS * (STEPS - 1)) / 2, patched: true });

    const log = await runtime.history('long-1');
    expect(log.length).toBeGreaterThan(100);
    expect(types(log)).toContain('EXECUTION_SUSPENDED');
    expect(recording.puts.length).toBeGreaterThanOrEqual(Math.floor(log.length / 10) - 1);
    const seqs = recording.puts.map((snapshot) => snapshot.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    for (const snapshot of recording.puts) {
      expect(snapshot.executionId).toBe('long-1');
      expect(decode<ExecutionState>(snapshot.state)).toStrictEqual(fold(log.slice(0, snapshot.seq + 1)));
    }
    expect((await stores.snapshots.latest('long-1'))?.seq).toBe(seqs.at(-1));
  });

  test('L5: fold(snapshot at any seq + later events) equals fold(all events)', async () => {
    const { stores } = h.open();
    const { workflow } = long();
    const runtime = h.runtime({ stores, workflows: [workflow], snapshotEvery: 10 });
    await (await runtime.start(workflow, { seed: 2 }, { executionId: 'long-2' })).result();
    const log = await runtime.history('long-2');
    const whole = fold(log);
    for (let seq = 0; seq < log.length; seq++) {
      const cached = decode<ExecutionState>(encode(fold(log.slice(0, seq + 1))));
      expect(fold(log.slice(seq + 1), cached)).toStrictEqual(whole);
    }
    expect(await runtime.loadState('long-2')).toStrictEqual(whole);
  });

  test('L5: loadState reads only the events after the newest snapshot', async () => {
    const { stores } = h.open();
    const { workflow } = long();
    const runtime = h.runtime({ stores, workflows: [workflow], snapshotEvery: 10 });
    await (await runtime.start(workflow, { seed: 3 }, { executionId: 'long-3' })).result();
    const all = await stores.events.read('long-3', 0);
    const newest = await stores.snapshots.latest('long-3');
    expect(newest).not.toBeNull();

    const counting = new CountingEventStore(stores.events);
    const viaSnapshot = await loadState(withSnapshots(stores, stores.snapshots, counting), 'long-3');
    expect(counting.eventsRead).toBe(all.length - 1 - (newest?.seq ?? 0));
    expect(counting.eventsRead).toBeLessThan(10);

    await stores.snapshots.delete('long-3');
    counting.eventsRead = 0;
    const fromZero = await loadState(withSnapshots(stores, stores.snapshots, counting), 'long-3');
    expect(counting.eventsRead).toBe(all.length);
    expect(fromZero).toStrictEqual(viaSnapshot);
  });

  test('L5: deleting every snapshot changes no result, also of a recovery', async () => {
    const outcomes: unknown[] = [];
    for (const deleteSnapshots of [false, true]) {
      const { stores } = h.open();
      const { workflow, runs } = long();
      const crashing = new CrashingEventStore(stores.events, 20);
      const doomed = h.runtime({
        stores: withSnapshots(stores, stores.snapshots, crashing),
        workflows: [workflow],
        snapshotEvery: 10,
        clock: () => 1_000,
      });
      await expect(
        doomed.execute({ executionId: 'long-4', workflow: 'long', input: { seed: 4 } }),
      ).rejects.toThrow(/simulated crash/);
      await doomed.close();
      expect(await stores.snapshots.latest('long-4')).not.toBeNull();
      const before = await loadState(stores, 'long-4');
      if (deleteSnapshots) await stores.snapshots.delete('long-4');
      expect(await loadState(stores, 'long-4')).toStrictEqual(before);

      const survivor = h.runtime({ stores, workflows: [workflow], snapshotEvery: 10 });
      await survivor.execute({ executionId: 'long-4', workflow: 'long', input: { seed: 4 } });
      const { at: _at, ...output } = await survivor.result<{ at: number }>('long-4');
      const ranTwice = [...runs].filter(([, count]) => count > 1).map(([name]) => name);
      // add-19 was in flight at the crash; add-30 fails its first attempt by design.
      expect(ranTwice).toEqual(['add-19', 'add-30']);
      const log = await survivor.history('long-4');
      expect(types(log).filter((t) => t === 'EXECUTION_RECOVERED')).toHaveLength(1);
      expect(await survivor.loadState('long-4')).toStrictEqual(fold(log));
      outcomes.push({ output, types: types(log), ranTwice });
    }
    expect(outcomes[1]).toEqual(outcomes[0]);
  });
});
