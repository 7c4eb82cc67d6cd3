/**
 * @skein/store-postgres: every Skein store SPI on PostgreSQL through `pg` (one-statement
 * appends, numbered migrations, `LISTEN`/`NOTIFY` wake-ups), for many processes on one database.
 */
export {
  InvalidPostgresOptionError,
  InvalidWakeupChannelError,
  MigrationError,
  NulInTextError,
  type PostgresErrorCode,
  PostgresErrorCodes,
  StoreClosedError,
  UnexpectedAppendResultError,
} from './errors.js';
export { openPostgresStores, type PostgresStores } from './open.js';
export { DEFAULT_POOL_SIZE, DEFAULT_SCHEMA, type PostgresStoresOptions } from './options.js';
export { PostgresBlockageStore } from './postgres-blockage-store.js';
export { PostgresEventStore } from './postgres-event-store.js';
export { PostgresFanOutStore } from './postgres-fan-out-store.js';
export { PostgresLeaseStore } from './postgres-lease-store.js';
export { PostgresOutboxStore, WAKEUP_OUTBOX } from './postgres-outbox-store.js';
export { PostgresQueueStore } from './postgres-queue-store.js';
export { PostgresScheduleStore } from './postgres-schedule-store.js';
export { PostgresSignalStore } from './postgres-signal-store.js';
export { PostgresSnapshotStore } from './postgres-snapshot-store.js';
export { PostgresTimerStore } from './postgres-timer-store.js';
export {
  PostgresWakeups,
  type Unsubscribe,
  WAKEUP_PENDING,
  WAKEUP_SIGNALS,
  WAKEUP_TIMERS,
  type WakeupHandler,
} from './wakeups.js';
