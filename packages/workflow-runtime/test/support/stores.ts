/**
 * Shared arrangement of the runtime's behavioural tests: every test runs against the
 * in-memory stores and a real SQLite file in a temp dir, and every runtime and store a test
 * opens is closed after it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStores } from '@skein/store-sqlite';
import {
  createRuntime,
  type Envelope,
  type EventStore,
  openMemoryStores,
  type Runtime,
  type RuntimeOptions,
  type Stores,
} from '@skein/workflow-runtime';
import { afterEach } from 'vitest';

/** Stores over one backing database; `reopen` opens it again as a restarted process would. */
export interface Backing {
  stores: Stores;
  /** New stores over the same data (a new connection for SQLite; the same stores in memory). */
  reopen(): Stores;
}

/** Opens a fresh, empty backing database. */
export type OpenBacking = (options?: { maxPayloadBytes?: number }) => Backing;

const openMemory: OpenBacking = (options) => {
  const stores = openMemoryStores(options);
  return { stores, reopen: () => stores };
};

const openSqlite: OpenBacking = (options) => {
  const dir = mkdtempSync(join(tmpdir(), 'skein-runtime-test-'));
  const path = join(dir, 'skein.db');
  const opened: Stores[] = [];
  const open = () => {
    const stores = openSqliteStores({ path, durability: 'normal', ...options });
    opened.push(stores);
    return stores;
  };
  const stores = open();
  const close = stores.close.bind(stores);
  // Closing the first stores closes every reopened connection and removes the file.
  stores.close = async () => {
    await Promise.all(opened.filter((s) => s !== stores).map((s) => s.close()));
    await close();
    rmSync(dir, { recursive: true, force: true });
  };
  return { stores, reopen: open };
};

/** Every store the runtime tests run against, for `describe.each`. */
export const backings: [string, OpenBacking][] = [
  ['memory', openMemory],
  ['sqlite', openSqlite],
];

/** What a test file needs: stores and runtimes that are closed after each test. */
export interface Harness {
  /** A fresh, empty backing database. */
  open(options?: { maxPayloadBytes?: number }): Backing;
  /** A runtime over `stores`; errors of its background work are collected in `backgroundErrors`. */
  runtime(options: RuntimeOptions): Runtime;
  /** Errors the runtimes reported through `onError`. */
  readonly backgroundErrors: unknown[];
}

/** Register the after-each cleanup for one `describe` block over `openBacking`. */
export function harness(openBacking: OpenBacking): Harness {
  const runtimes: Runtime[] = [];
  const backingsOpened: Backing[] = [];
  const backgroundErrors: unknown[] = [];
  afterEach(async () => {
    await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
    await Promise.all(backingsOpened.splice(0).map((backing) => backing.stores.close()));
    backgroundErrors.length = 0;
  });
  return {
    open(options) {
      const backing = openBacking(options);
      backingsOpened.push(backing);
      return backing;
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

/** A promise with its resolve function, for steps a test holds open. */
export function deferred<T = void>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Resolve once `check` holds, polling every few milliseconds (fails after `timeoutMs`). */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** An event store that delegates to `inner` and counts the events its reads return. */
export class CountingEventStore implements EventStore {
  eventsRead = 0;
  constructor(private readonly inner: EventStore) {}
  append: EventStore['append'] = (request) => this.inner.append(request);
  read: EventStore['read'] = async (executionId, fromSeq, limit) => {
    const events = await this.inner.read(executionId, fromSeq, limit);
    this.eventsRead += events.length;
    return events;
  };
  acquireFence: EventStore['acquireFence'] = (id) => this.inner.acquireFence(id);
  currentFence: EventStore['currentFence'] = (id) => this.inner.currentFence(id);
  getExecution: EventStore['getExecution'] = (id) => this.inner.getExecution(id);
  listExecutions: EventStore['listExecutions'] = (query) => this.inner.listExecutions(query);
}

/** Stores whose event store is `events` and whose other stores are `stores`' own. */
export function withEvents(stores: Stores, events: EventStore): Stores {
  return {
    events,
    snapshots: stores.snapshots,
    timers: stores.timers,
    leases: stores.leases,
    signals: stores.signals,
    close: () => undefined,
  };
}

/**
 * An event store that lets `appendsAllowed` appends through and then fails every append, as
 * a process that dies at that write boundary would: the log keeps exactly the prefix.
 */
export class CrashingEventStore implements EventStore {
  appends = 0;
  constructor(
    private readonly inner: EventStore,
    private readonly appendsAllowed: number,
  ) {}
  append: EventStore['append'] = async (request) => {
    if (this.appends >= this.appendsAllowed) {
      throw new Error(`simulated crash before append ${this.appends + 1} of "${request.executionId}"`);
    }
    this.appends += 1;
    return this.inner.append(request);
  };
  read: EventStore['read'] = (executionId, fromSeq, limit) => this.inner.read(executionId, fromSeq, limit);
  acquireFence: EventStore['acquireFence'] = (id) => this.inner.acquireFence(id);
  currentFence: EventStore['currentFence'] = (id) => this.inner.currentFence(id);
  getExecution: EventStore['getExecution'] = (id) => this.inner.getExecution(id);
  listExecutions: EventStore['listExecutions'] = (query) => this.inner.listExecutions(query);
}

/** Resolve once the log of `executionId` holds `count` events of `type`. */
export async function untilLogHas(
  runtime: { history(id: string): Promise<Envelope[]> },
  executionId: string,
  type: string,
  count = 1,
): Promise<void> {
  await until(
    async () => types(await runtime.history(executionId)).filter((t) => t === type).length >= count,
  );
}

/** The payload of `event`, typed; fails the test when the event is missing. */
export function payloadOf<T>(event: Envelope | undefined): T {
  if (event === undefined) throw new Error('expected an event, found none');
  return event.payload as T;
}
