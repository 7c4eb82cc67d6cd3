/** checkLog / assertInvariants / checkSnapshots find each broken invariant in a log, and pass a sound one. */

import {
  assertInvariants,
  checkLog,
  checkSnapshots,
  Effects,
  InvariantViolationError,
  VirtualClock,
} from '@skein/testkit';
import { createRuntime, fold, openMemoryStores, readHistory } from '@skein/workflow-runtime';
import { encode, toEnvelope } from '@skein/workflow-runtime/internal';
import type { StoredEvent } from '@skein/workflow-runtime/spi';
import { describe, expect, it } from 'vitest';
import { order } from './workflows.js';

function event(seq: number, type: StoredEvent['type'], fence = 0, executionId = 'x'): StoredEvent {
  return {
    executionId,
    seq,
    envelopeId: `env-${executionId}-${seq}-${type}`,
    type,
    payload: '{}',
    fence,
    recordedAt: seq,
  };
}

async function finishedOrder() {
  const stores = openMemoryStores();
  const clock = new VirtualClock();
  const runtime = createRuntime({
    stores,
    workflows: [order(new Effects())],
    clock: clock.clock,
    snapshotEvery: 3,
  });
  await runtime.execute({ executionId: 'o', workflow: 'order', input: { qty: 2 } });
  for (let i = 0; i < 3; i++) {
    clock.advance(60_000);
    await runtime.wake('o');
  }
  await runtime.close();
  return stores;
}

describe('checkLog', () => {
  it('a log the runtime wrote (sleeps, retries, resumes) breaks nothing', async () => {
    const stores = await finishedOrder();
    const log = await readHistory(stores.events, 'o');
    expect(log.at(-1)?.type).toBe('EXECUTION_COMPLETED');
    // Resumes keep the newest fence (adr/0016); the log went through suspensions and resumes.
    expect(log.filter((e) => e.type === 'EXECUTION_RESUMED').length).toBeGreaterThan(1);
    expect(checkLog(log)).toEqual([]);
    expect(() => assertInvariants(log)).not.toThrow();
    expect(checkLog([])).toEqual([]);
  });

  it('L1: a gap, a repeated seq and a reused envelope id are each reported', () => {
    const log = [event(0, 'EXECUTION_STARTED'), event(2, 'STEP_STARTED'), event(2, 'STEP_COMPLETED')];
    log.push({ ...event(3, 'STEP_STARTED'), envelopeId: log[1]!.envelopeId });
    expect(checkLog(log)).toEqual([
      { invariant: 'L1', message: 'position 1 holds seq 2 (seq must be dense from 0)' },
      { invariant: 'L1', message: 'seq 2 appears twice' },
      { invariant: 'L1', message: `seq 3 reuses envelope id ${log[1]!.envelopeId}` },
    ]);
  });

  it('L2: seq 0 must be EXECUTION_STARTED, and nothing else may be', () => {
    expect(checkLog([event(0, 'STEP_STARTED')]).map((v) => v.invariant)).toEqual(['L2']);
    const twice = checkLog([event(0, 'EXECUTION_STARTED'), event(1, 'EXECUTION_STARTED')]);
    expect(twice).toEqual([{ invariant: 'L2', message: 'EXECUTION_STARTED again at seq 1' }]);
  });

  it('L3: a fence that goes back along the log is reported', () => {
    const log = [
      event(0, 'EXECUTION_STARTED', 0),
      event(1, 'EXECUTION_RECOVERED', 2),
      event(2, 'STEP_STARTED', 1),
    ];
    expect(checkLog(log)).toEqual([
      { invariant: 'L3', message: 'fence goes back from 2 (seq 1) to 1 (seq 2)' },
    ]);
  });

  it('L6: an event after a terminal one is reported, and assertInvariants throws naming it', () => {
    const log = [event(0, 'EXECUTION_STARTED'), event(1, 'EXECUTION_FAILED'), event(2, 'STEP_STARTED')];
    expect(checkLog(log)).toEqual([
      { invariant: 'L6', message: 'STEP_STARTED at seq 2 follows terminal EXECUTION_FAILED' },
    ]);
    const error = (() => {
      try {
        assertInvariants(log);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(InvariantViolationError);
    expect(error).toMatchObject({
      code: 'INVARIANT_VIOLATED',
      executionId: 'x',
      violations: [{ invariant: 'L6' }],
    });
    expect((error as Error).message).toContain('L6: STEP_STARTED at seq 2 follows terminal EXECUTION_FAILED');
  });
});

describe('checkSnapshots', () => {
  it('L5: the runtime’s snapshots fold to the same state as the log from zero', async () => {
    const stores = await finishedOrder();
    expect((await stores.snapshots.latest('o'))?.seq).toBeGreaterThan(0);
    expect(await checkSnapshots(stores, 'o')).toEqual([]);
  });

  it('L5: a snapshot that disagrees with the log is reported, naming the fields that differ', async () => {
    const stores = await finishedOrder();
    const events = await stores.events.read('o', 0, 4);
    const early = fold(events.map((e) => toEnvelope(e)))!;
    // A wrong cache: the state at seq 3 stored under the newest seq.
    await stores.snapshots.put({ executionId: 'o', seq: 99, state: encode({ ...early, sequence: 99 }) });
    const [violation] = await checkSnapshots(stores, 'o');
    expect(violation?.invariant).toBe('L5');
    expect(violation?.message).toMatch(/snapshot at seq 99 .* in: .*status/);
  });
});
