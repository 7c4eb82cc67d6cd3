/**
 * Per-store wrappers that route every call through a {@link Guard} (see faulty-store.ts). An
 * optional SPI method is on a wrapper exactly when the wrapped store has it, so a caller that
 * uses it (a Supervisor's `takeOverPending`, batched lease calls) sees what the store offers.
 */
import type { EventStore, LeaseStore, SnapshotStore, TimerStore } from '@skein/workflow-runtime';
import type { ClaimTimersOptions } from '@skein/workflow-runtime/spi';
import type { WriteOp } from './faulty-store.js';

/** Decides what happens to each call: counts and faults writes, refuses calls after a crash. */
export interface Guard {
  write<T>(op: WriteOp, args: readonly unknown[], apply: () => Promise<T>): Promise<T>;
  read<T>(op: string, apply: () => Promise<T>): Promise<T>;
}

export function wrapEvents(inner: EventStore, guard: Guard): EventStore {
  const wrapped: EventStore = {
    append: (request) => guard.write('events.append', [request], () => inner.append(request)),
    acquireFence: (id) => guard.write('events.acquireFence', [id], () => inner.acquireFence(id)),
    read: (id, fromSeq, limit) => guard.read('events.read', () => inner.read(id, fromSeq, limit)),
    currentFence: (id) => guard.read('events.currentFence', () => inner.currentFence(id)),
    getExecution: (id) => guard.read('events.getExecution', () => inner.getExecution(id)),
    listExecutions: (query) => guard.read('events.listExecutions', () => inner.listExecutions(query)),
  };
  const takeOverPending = inner.takeOverPending?.bind(inner);
  if (takeOverPending !== undefined)
    wrapped.takeOverPending = (ids) =>
      guard.write('events.takeOverPending', [ids], () => takeOverPending(ids));
  return wrapped;
}

export function wrapSnapshots(inner: SnapshotStore, guard: Guard): SnapshotStore {
  return {
    put: (snapshot) => guard.write('snapshots.put', [snapshot], () => inner.put(snapshot)),
    delete: (id) => guard.write('snapshots.delete', [id], () => inner.delete(id)),
    latest: (id) => guard.read('snapshots.latest', () => inner.latest(id)),
  };
}

export function wrapTimers(inner: TimerStore, guard: Guard): TimerStore {
  return {
    schedule: (timer) => guard.write('timers.schedule', [timer], () => inner.schedule(timer)),
    claimDue: (options) => guard.write('timers.claimDue', [options], () => inner.claimDue(options)),
    claim: (timerId, options: Omit<ClaimTimersOptions, 'limit'>) =>
      guard.write('timers.claim', [timerId, options], () => inner.claim(timerId, options)),
    complete: (timerId) => guard.write('timers.complete', [timerId], () => inner.complete(timerId)),
    forExecution: (id) => guard.read('timers.forExecution', () => inner.forExecution(id)),
    nextDueAt: () => guard.read('timers.nextDueAt', () => inner.nextDueAt()),
  };
}

export function wrapLeases(inner: LeaseStore, guard: Guard): LeaseStore {
  const wrapped: LeaseStore = {
    claim: (key, owner, ttlMs, now) =>
      guard.write('leases.claim', [key, owner, ttlMs, now], () => inner.claim(key, owner, ttlMs, now)),
    renew: (key, owner, ttlMs, now) =>
      guard.write('leases.renew', [key, owner, ttlMs, now], () => inner.renew(key, owner, ttlMs, now)),
    release: (key, owner) => guard.write('leases.release', [key, owner], () => inner.release(key, owner)),
    get: (key) => guard.read('leases.get', () => inner.get(key)),
    listExpired: (now, limit) => guard.read('leases.listExpired', () => inner.listExpired(now, limit)),
  };
  const claimMany = inner.claimMany?.bind(inner);
  if (claimMany !== undefined)
    wrapped.claimMany = (keys, owner, ttlMs, now) =>
      guard.write('leases.claimMany', [keys, owner, ttlMs, now], () => claimMany(keys, owner, ttlMs, now));
  const releaseMany = inner.releaseMany?.bind(inner);
  if (releaseMany !== undefined)
    wrapped.releaseMany = (keys, owner) =>
      guard.write('leases.releaseMany', [keys, owner], () => releaseMany(keys, owner));
  return wrapped;
}
