/** The public surface of @skein/store-postgres: every export is there and is what the stores use. */
import {
  DEFAULT_POOL_SIZE,
  DEFAULT_SCHEMA,
  InvalidPostgresOptionError,
  InvalidWakeupChannelError,
  MigrationError,
  NulInTextError,
  openPostgresStores,
  PostgresBlockageStore,
  PostgresEventStore,
  PostgresFanOutStore,
  PostgresLeaseStore,
  PostgresQueueStore,
  PostgresScheduleStore,
  PostgresSignalStore,
  PostgresSnapshotStore,
  PostgresTimerStore,
  PostgresWakeups,
  StoreClosedError,
  UnexpectedAppendResultError,
  WAKEUP_PENDING,
  WAKEUP_SIGNALS,
  WAKEUP_TIMERS,
} from '@skein/store-postgres';
import { SkeinError } from '@skein/workflow-runtime';
import { describe, expect, it } from 'vitest';
import { openTestStores, whenPostgres } from './support/pg.js';

describe('@skein/store-postgres exports', () => {
  it('errors are SkeinErrors with stable codes', () => {
    const errors = [
      new InvalidPostgresOptionError('url', 'is bad'),
      new InvalidWakeupChannelError('X', 'is bad'),
      new MigrationError('s', 'why'),
      new NulInTextError('e', 'the payload'),
      new StoreClosedError('s', 'read'),
      new UnexpectedAppendResultError('e', 'why'),
    ];
    for (const error of errors) expect(error).toBeInstanceOf(SkeinError);
    expect(errors.map((error) => error.code)).toEqual([
      'POSTGRES_INVALID_OPTION',
      'POSTGRES_INVALID_CHANNEL',
      'POSTGRES_MIGRATION_FAILED',
      'POSTGRES_NUL_IN_TEXT',
      'POSTGRES_STORE_CLOSED',
      'POSTGRES_UNEXPECTED_APPEND_RESULT',
    ]);
    expect([DEFAULT_SCHEMA, DEFAULT_POOL_SIZE, WAKEUP_TIMERS, WAKEUP_SIGNALS, WAKEUP_PENDING]).toEqual([
      'skein',
      10,
      'timers',
      'signals',
      'pending',
    ]);
  });

  whenPostgres(() => {
    it('openPostgresStores returns the exported store classes', async () => {
      const stores = await openTestStores();
      try {
        expect(stores.events).toBeInstanceOf(PostgresEventStore);
        expect(stores.snapshots).toBeInstanceOf(PostgresSnapshotStore);
        expect(stores.timers).toBeInstanceOf(PostgresTimerStore);
        expect(stores.blockages).toBeInstanceOf(PostgresBlockageStore);
        expect(stores.leases).toBeInstanceOf(PostgresLeaseStore);
        expect(stores.signals).toBeInstanceOf(PostgresSignalStore);
        expect(stores.queues).toBeInstanceOf(PostgresQueueStore);
        expect(stores.schedules).toBeInstanceOf(PostgresScheduleStore);
        expect(stores.fanOuts).toBeInstanceOf(PostgresFanOutStore);
        expect(stores.wakeups).toBeInstanceOf(PostgresWakeups);
        expect(typeof openPostgresStores).toBe('function');
      } finally {
        await stores.close();
      }
    });
  });
});
