/**
 * @skein/store-sqlite: every Skein store SPI on one embedded SQLite file (better-sqlite3, WAL,
 * numbered migrations, group commit).
 */
export { type ConnectionOptions, DEFAULT_BUSY_TIMEOUT_MS, type Durability } from './connection.js';
export {
  InvalidSqliteOptionError,
  MigrationError,
  type SqliteErrorCode,
  SqliteErrorCodes,
  StoreClosedError,
} from './errors.js';
export { openSqliteStores, type SqliteStores, type SqliteStoresOptions } from './open.js';
export { SqliteBlockageStore } from './sqlite-blockage-store.js';
export { SqliteEventStore, type SqliteEventStoreOptions } from './sqlite-event-store.js';
export { SqliteFanOutStore } from './sqlite-fan-out-store.js';
export { SqliteLeaseStore } from './sqlite-lease-store.js';
export { SqliteOutboxStore } from './sqlite-outbox-store.js';
export { SqliteQueueStore } from './sqlite-queue-store.js';
export { SqliteScheduleStore } from './sqlite-schedule-store.js';
export { SqliteSignalStore } from './sqlite-signal-store.js';
export { SqliteSnapshotStore } from './sqlite-snapshot-store.js';
export { SqliteTimerStore } from './sqlite-timer-store.js';
