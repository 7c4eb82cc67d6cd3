/** The PostgreSQL stores pass every conformance suite against a real server, one schema per test. */
import {
  blockageStoreSuite,
  eventStoreSuite,
  leaseStoreSuite,
  outboxStoreSuite,
  queueStoreSuite,
  scheduleStoreSuite,
  signalStoreSuite,
  snapshotStoreSuite,
  timerStoreSuite,
} from '@skein/conformance';
import { openTestStores, whenPostgres } from './support/pg.js';

whenPostgres(() => {
  eventStoreSuite({
    name: 'postgres',
    open: () => openTestStores(),
    unsupported: { nulInText: 'PostgreSQL text cannot hold U+0000; refused with NulInTextError' },
  });
  snapshotStoreSuite({ name: 'postgres', open: () => openTestStores() });
  timerStoreSuite({ name: 'postgres', open: () => openTestStores() });
  leaseStoreSuite({ name: 'postgres', open: () => openTestStores() });
  signalStoreSuite({ name: 'postgres', open: () => openTestStores() });
  queueStoreSuite({ name: 'postgres', open: () => openTestStores() });
  scheduleStoreSuite({ name: 'postgres', open: () => openTestStores() });
  outboxStoreSuite({ name: 'postgres', open: () => openTestStores() });
  blockageStoreSuite({ name: 'postgres', open: () => openTestStores() });
});
