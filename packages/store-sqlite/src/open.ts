/** `openSqliteStores`: every store SPI on one SQLite file. */
import type { Stores } from '@skein/workflow-runtime';
import { CloseHooks } from '@skein/workflow-runtime/spi';
import { type ConnectionOptions, openConnection } from './connection.js';
import { loadMigrations, migrate } from './migrate.js';
import { SqliteBlockageStore } from './sqlite-blockage-store.js';
import { SqliteEventStore } from './sqlite-event-store.js';
import { SqliteFanOutStore } from './sqlite-fan-out-store.js';
import { SqliteLeaseStore } from './sqlite-lease-store.js';
import { SqliteOutboxStore } from './sqlite-outbox-store.js';
import { SqliteQueueStore } from './sqlite-queue-store.js';
import { SqliteScheduleStore } from './sqlite-schedule-store.js';
import { SqliteSignalStore } from './sqlite-signal-store.js';
import { SqliteSnapshotStore } from './sqlite-snapshot-store.js';
import { SqliteTimerStore } from './sqlite-timer-store.js';

/** Options of {@link openSqliteStores}. */
export interface SqliteStoresOptions extends ConnectionOptions {
  /** Per-event payload limit in UTF-8 bytes (default: 1 MiB). */
  maxPayloadBytes?: number;
  /** Most appends committed in one transaction (default: 1000). */
  maxBatch?: number;
}

/** The stores of one SQLite file; `close()` flushes queued appends, then closes the file. */
export interface SqliteStores extends Stores {
  events: SqliteEventStore;
  snapshots: SqliteSnapshotStore;
  timers: SqliteTimerStore;
  leases: SqliteLeaseStore;
  signals: SqliteSignalStore;
  /** Queue items and slots (docs/queues.md). */
  queues: SqliteQueueStore;
  /** Schedule state (docs/schedules.md). */
  schedules: SqliteScheduleStore;
  /** The outbox: an append's messages commit in its transaction (O1). */
  outbox: SqliteOutboxStore;
  /** Blockages of executions that could not be continued (adr/0058). */
  blockages: SqliteBlockageStore;
  /** The fan-out tables (docs/fan-out.md): chunk-ready messages commit with the change that causes them. */
  fanOuts: SqliteFanOutStore;
  close(): Promise<void>;
}

/**
 * Open (creating if needed) a SQLite file in WAL mode, apply the numbered migrations it
 * lacks, and return every store on one connection. Several processes may open the same file.
 * @example
 * const stores = openSqliteStores({ path: './skein.db' });
 * const runtime = createRuntime({ stores, workflows: [order] });
 * // …
 * await stores.close();
 */
export function openSqliteStores(options: SqliteStoresOptions): SqliteStores {
  const db = openConnection(options);
  try {
    migrate(db, loadMigrations());
  } catch (error) {
    db.close();
    throw error;
  }
  const events = new SqliteEventStore(db, options);
  const hooks = new CloseHooks();
  let closing: Promise<void> | undefined;
  return {
    events,
    snapshots: new SqliteSnapshotStore(db),
    timers: new SqliteTimerStore(db),
    leases: new SqliteLeaseStore(db),
    signals: new SqliteSignalStore(db),
    queues: new SqliteQueueStore(db),
    schedules: new SqliteScheduleStore(db),
    outbox: new SqliteOutboxStore(db),
    blockages: new SqliteBlockageStore(db),
    fanOuts: new SqliteFanOutStore(db),
    beforeClose: (hook) => hooks.add(hook),
    close() {
      const shut = () =>
        events.drain().then(() => {
          db.close();
        });
      // The runtimes' maintenance stops first (new appends are refused once it has); with no
      // runtime's hook, the appends queued now are the last.
      closing ??= hooks.empty ? shut() : hooks.run().finally(shut);
      return closing;
    },
  };
}
