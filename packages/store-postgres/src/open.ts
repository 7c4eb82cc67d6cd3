/** `openPostgresStores`: every store SPI on one PostgreSQL schema. */
import type { Stores } from '@skein/workflow-runtime';
import { CloseHooks } from '@skein/workflow-runtime/spi';
import { Database } from './database.js';
import { loadMigrations, migrate } from './migrate.js';
import { type PostgresStoresOptions, resolveOptions } from './options.js';
import { PostgresBlockageStore } from './postgres-blockage-store.js';
import { PostgresEventStore } from './postgres-event-store.js';
import { PostgresFanOutStore } from './postgres-fan-out-store.js';
import { PostgresLeaseStore } from './postgres-lease-store.js';
import { PostgresOutboxStore } from './postgres-outbox-store.js';
import { PostgresQueueStore } from './postgres-queue-store.js';
import { PostgresScheduleStore } from './postgres-schedule-store.js';
import { PostgresSignalStore } from './postgres-signal-store.js';
import { PostgresSnapshotStore } from './postgres-snapshot-store.js';
import { PostgresTimerStore } from './postgres-timer-store.js';
import { PostgresWakeups } from './wakeups.js';

/** The stores of one PostgreSQL schema, plus wake-ups; `close()` waits for calls in flight. */
export interface PostgresStores extends Stores {
  events: PostgresEventStore;
  snapshots: PostgresSnapshotStore;
  timers: PostgresTimerStore;
  leases: PostgresLeaseStore;
  /** The signal inbox (new signals notify the `signals` wake-up channel). */
  signals: PostgresSignalStore;
  /** Queue items and slots (docs/queues.md). */
  queues: PostgresQueueStore;
  /** Schedule state (docs/schedules.md). */
  schedules: PostgresScheduleStore;
  /** The outbox: an append's messages are written by the append statement itself (O1). */
  outbox: PostgresOutboxStore;
  /** Blockages of executions that could not be continued (adr/0058). */
  blockages: PostgresBlockageStore;
  /** The fan-out tables (docs/fan-out.md): chunk-ready messages commit with the change that causes them. */
  fanOuts: PostgresFanOutStore;
  /** `LISTEN`/`NOTIFY` between the processes sharing the schema (timers notify `timers`). */
  wakeups: PostgresWakeups;
  /** The schema the stores live in. */
  readonly schema: string;
  close(): Promise<void>;
}

/**
 * Connect a pool to PostgreSQL, create the schema and apply the numbered migrations it lacks
 * (under an advisory lock, so many processes may open at once), and return every store.
 * Asynchronous, unlike `openSqliteStores`: a bad URL or a failed migration rejects here,
 * before the stores are handed out (see `adr/0008-postgres-open-is-async.md`).
 * @example
 * const stores = await openPostgresStores({ url: 'postgres://skein@db:5432/app' });
 * const runtime = createRuntime({ stores, workflows: [order] });
 * // …
 * await runtime.close();
 * await stores.close();
 */
export async function openPostgresStores(options: PostgresStoresOptions): Promise<PostgresStores> {
  const resolved = resolveOptions(options);
  const db = new Database(resolved);
  try {
    const client = await db.pool.connect();
    let failed = true;
    try {
      await migrate(client, resolved.schema, loadMigrations());
      failed = false;
    } finally {
      db.pool.release(client, failed);
    }
  } catch (error) {
    await db.close();
    throw error;
  }
  const wakeups = new PostgresWakeups(db);
  const hooks = new CloseHooks();
  let closing: Promise<void> | undefined;
  return {
    events: new PostgresEventStore(db, resolved.maxPayloadBytes),
    snapshots: new PostgresSnapshotStore(db),
    timers: new PostgresTimerStore(db),
    leases: new PostgresLeaseStore(db),
    signals: new PostgresSignalStore(db),
    queues: new PostgresQueueStore(db),
    schedules: new PostgresScheduleStore(db),
    outbox: new PostgresOutboxStore(db),
    blockages: new PostgresBlockageStore(db),
    fanOuts: new PostgresFanOutStore(db),
    wakeups,
    schema: resolved.schema,
    beforeClose: (hook) => hooks.add(hook),
    close() {
      const shut = () => Promise.all([wakeups.close(), db.close()]).then(() => undefined);
      // The runtimes' maintenance stops first; with no runtime's hook the pool ends at once.
      closing ??= hooks.empty ? shut() : hooks.run().finally(shut);
      return closing;
    },
  };
}
