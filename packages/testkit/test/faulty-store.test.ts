/** faultyStore: a failure or a crash at the chosen write; after a crash the wrapper is dead, the inner stores intact. */

import {
  faultyStore,
  InjectedFaultError,
  SimulatedCrashError,
  type WriteInfo,
  WriteOps,
} from '@skein/testkit';
import { InvalidInputError, openMemoryStores, readHistory } from '@skein/workflow-runtime';
import { describe, expect, it } from 'vitest';

const started = (
  executionId: string,
  seq = 0,
  type: 'EXECUTION_STARTED' | 'STEP_STARTED' = 'EXECUTION_STARTED',
) => ({
  executionId,
  workflow: 'wf',
  expectedSeq: seq,
  fence: 0,
  events: [{ envelopeId: `${executionId}-${seq}`, type, payload: '{}', recordedAt: 1 }],
});

describe('faultyStore', () => {
  it('crash-before: the write is not applied, and every later call (reads too) rejects with SimulatedCrashError', async () => {
    const inner = openMemoryStores();
    const stores = faultyStore(inner, { at: 1, fault: 'crash-before' });
    await stores.events.append(started('a'));
    const crash = await stores.events
      .append(started('a', 1, 'STEP_STARTED'))
      .catch((error: unknown) => error);
    expect(crash).toBeInstanceOf(SimulatedCrashError);
    expect(crash).toMatchObject({
      code: 'SIMULATED_CRASH',
      when: 'before',
      write: { index: 1, op: 'events.append' },
    });
    await expect(stores.events.read('a')).rejects.toThrow(SimulatedCrashError);
    await expect(stores.timers.schedule({ timerId: 't', executionId: 'a', dueAt: 1 })).rejects.toThrow(
      /events.append/,
    );
    expect((await readHistory(inner.events, 'a')).map((event) => event.type)).toEqual(['EXECUTION_STARTED']);
    expect(await inner.timers.forExecution('a')).toEqual([]);
  });

  it('crash-after: the write is applied, yet the caller and every later call see the crash', async () => {
    const inner = openMemoryStores();
    const stores = faultyStore(inner, { at: 0, fault: 'crash-after' });
    await expect(stores.events.append(started('b'))).rejects.toThrow(SimulatedCrashError);
    await expect(stores.events.acquireFence('b')).rejects.toThrow(SimulatedCrashError);
    expect((await readHistory(inner.events, 'b')).map((event) => event.type)).toEqual(['EXECUTION_STARTED']);
    expect(await inner.events.currentFence('b')).toBe(0);
    expect(stores.writes.map((write) => write.op)).toEqual(['events.append']);
  });

  it('throw: the write fails and is not applied, and the wrapper goes on', async () => {
    const inner = openMemoryStores();
    const stores = faultyStore(inner, { at: (write) => write.op === 'snapshots.put', fault: 'throw' });
    await stores.events.append(started('c'));
    const error = await stores.snapshots
      .put({ executionId: 'c', seq: 0, state: 's' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InjectedFaultError);
    expect(error).toMatchObject({ write: { index: 1, op: 'snapshots.put' } });
    expect(await inner.snapshots.latest('c')).toBeNull();
    await stores.snapshots.put({ executionId: 'c', seq: 0, state: 's2' });
    expect(await inner.snapshots.latest('c')).toEqual({ executionId: 'c', seq: 0, state: 's2' });
    expect(stores.faulted?.index).toBe(1);
    expect(stores.crash).toBeUndefined();
  });

  it('counts every kind of write, with its arguments, and never a read', async () => {
    const stores = faultyStore(openMemoryStores());
    await stores.events.append(started('d'));
    await stores.snapshots.put({ executionId: 'd', seq: 0, state: 's' });
    await stores.events.takeOverPending?.(['d']);
    await stores.events.acquireFence('d');
    await stores.events.read('d');
    await stores.timers.schedule({ timerId: 't', executionId: 'd', dueAt: 5 });
    await stores.timers.claim('t', { now: 5, owner: 'n', claimTtlMs: 10 });
    await stores.timers.claimDue({ now: 5, limit: 1, owner: 'n', claimTtlMs: 10 });
    await stores.timers.complete('t');
    await stores.snapshots.delete('d');
    await stores.leases.claim('k', 'n', 10, 0);
    await stores.leases.renew('k', 'n', 10, 1);
    await stores.leases.get('k');
    await stores.leases.release('k', 'n');
    const ops = stores.writes.map((write: WriteInfo) => write.op);
    expect(ops).toEqual([
      'events.append',
      'snapshots.put',
      'events.takeOverPending',
      'events.acquireFence',
      'timers.schedule',
      'timers.claim',
      'timers.claimDue',
      'timers.complete',
      'snapshots.delete',
      'leases.claim',
      'leases.renew',
      'leases.release',
    ]);
    // The memory lease store has no batched calls; store-wrappers.test.ts counts them on PostgreSQL.
    const batched = new Set<string>(['leases.claimMany', 'leases.releaseMany']);
    expect(new Set(ops)).toEqual(new Set(WriteOps.filter((op) => !batched.has(op))));
    expect(stores.writes[4]!.args).toEqual([{ timerId: 't', executionId: 'd', dueAt: 5 }]);
  });

  it('a custom error for a throw fault, and a bad plan refused naming the field', async () => {
    const stores = faultyStore(openMemoryStores(), {
      at: 0,
      fault: 'throw',
      error: () => new Error('disk full'),
    });
    await expect(stores.events.acquireFence('e')).rejects.toThrow('disk full');
    expect(() => faultyStore(openMemoryStores(), { at: -1, fault: 'throw' })).toThrow(InvalidInputError);
    expect(() => faultyStore(openMemoryStores(), { at: 0, fault: 'explode' as 'throw' })).toThrow(
      /plan\.fault/,
    );
  });
});
