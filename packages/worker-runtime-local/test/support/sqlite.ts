/**
 * Test arrangement: real SQLite files in temp dirs; every runtime and store a test opens is
 * closed (and the directory removed) after it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStores } from '@skein/store-sqlite';
import {
  createRuntime,
  type Envelope,
  type EventStore,
  type LeaseStore,
  type Runtime,
  type RuntimeOptions,
  type Stores,
} from '@skein/workflow-runtime';
import { afterEach } from 'vitest';

/** A SQLite database in a temp dir; `connect()` opens another connection, as another process would. */
export interface Db {
  path: string;
  dir: string;
  stores: Stores;
  connect(): Stores;
}

/** What a test file needs. */
export interface Harness {
  db(): Db;
  runtime(options: RuntimeOptions): Runtime;
  readonly backgroundErrors: unknown[];
}

/** Register after-each cleanup; returns the openers. */
export function harness(): Harness {
  const runtimes: Runtime[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  const backgroundErrors: unknown[] = [];
  afterEach(async () => {
    await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
    for (const cleanup of cleanups.splice(0)) await cleanup();
    backgroundErrors.length = 0;
  });
  return {
    db() {
      const dir = mkdtempSync(join(tmpdir(), 'skein-dispatch-test-'));
      const path = join(dir, 'skein.db');
      const opened: Stores[] = [];
      const connect = () => {
        const stores = openSqliteStores({ path, durability: 'normal' });
        opened.push(stores);
        return stores;
      };
      const stores = connect();
      cleanups.push(async () => {
        for (const s of opened) await s.close();
        rmSync(dir, { recursive: true, force: true });
      });
      return { path, dir, stores, connect };
    },
    runtime(options) {
      const runtime = createRuntime({ onError: (error) => backgroundErrors.push(error), ...options });
      runtimes.push(runtime);
      return runtime;
    },
    backgroundErrors,
  };
}

/** The event types of a log, in seq order. */
export function types(log: readonly Envelope[]): string[] {
  return log.map((event) => event.type);
}

/** How many events of `type` the log holds. */
export function count(log: readonly Envelope[], type: string): number {
  return log.filter((event) => event.type === type).length;
}

// The runtime's test support already has these; one copy for the workspace's tests.
export { deferred, until } from '../../../workflow-runtime/test/support/stores.js';

/** A clock tests move by hand. */
export function manualClock(start = 1_700_000_000_000): { now: () => number; advance(ms: number): void } {
  let t = start;
  return {
    now: () => t,
    advance: (ms) => {
      t += ms;
    },
  };
}

/** Stores whose event store is `events`. */
export function withEvents(stores: Stores, events: EventStore): Stores {
  return { ...stores, events, close: () => undefined };
}

/**
 * An event store that fails reads (and listing, when asked) of chosen executions, as a
 * broken row or a poisoned log would; `heal()` makes it work again.
 */
/** The lease calls a {@link watchedLeases} store saw: the keys, in order, and the most claims at once. */
export interface LeaseCalls {
  claim: string[];
  release: string[];
  get: string[];
  mostClaimsAtOnce: number;
}

/** `stores` with a lease store that records the keys of its calls and passes each to the real one. */
export function watchedLeases(stores: Stores): { stores: Stores; calls: LeaseCalls } {
  const inner = stores.leases;
  const calls: LeaseCalls = { claim: [], release: [], get: [], mostClaimsAtOnce: 0 };
  let claiming = 0;
  const leases: LeaseStore = Object.create(inner);
  leases.claim = async (...args) => {
    calls.claim.push(args[0]);
    claiming += 1;
    calls.mostClaimsAtOnce = Math.max(calls.mostClaimsAtOnce, claiming);
    try {
      return await inner.claim(...args);
    } finally {
      claiming -= 1;
    }
  };
  leases.release = (key, owner) => {
    calls.release.push(key);
    return inner.release(key, owner);
  };
  leases.get = (key) => {
    calls.get.push(key);
    return inner.get(key);
  };
  return { stores: { ...stores, leases }, calls };
}

export class PoisonEventStore implements EventStore {
  readonly poisoned = new Set<string>();
  failListing = 0;
  constructor(private readonly inner: EventStore) {}
  append: EventStore['append'] = (request) => this.inner.append(request);
  read: EventStore['read'] = async (id, from, limit) => {
    if (this.poisoned.has(id)) throw new Error(`poisoned read of "${id}"`);
    return this.inner.read(id, from, limit);
  };
  acquireFence: EventStore['acquireFence'] = (id) => this.inner.acquireFence(id);
  currentFence: EventStore['currentFence'] = (id) => this.inner.currentFence(id);
  getExecution: EventStore['getExecution'] = (id) => this.inner.getExecution(id);
  listExecutions: EventStore['listExecutions'] = async (query) => {
    if (this.failListing > 0) {
      this.failListing -= 1;
      throw new Error('listing failed (simulated outage)');
    }
    return this.inner.listExecutions(query);
  };
}
