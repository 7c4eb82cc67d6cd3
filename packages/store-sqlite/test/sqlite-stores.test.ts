/** The SQLite stores pass every conformance suite, on a real file, in both durability modes. */
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
import { openTempStores } from './temp-stores.js';

for (const durability of ['full', 'normal'] as const) {
  eventStoreSuite({ name: `sqlite (${durability})`, open: () => openTempStores({ durability }) });
}
snapshotStoreSuite({ name: 'sqlite', open: () => openTempStores() });
timerStoreSuite({ name: 'sqlite', open: () => openTempStores() });
leaseStoreSuite({ name: 'sqlite', open: () => openTempStores() });
signalStoreSuite({ name: 'sqlite', open: () => openTempStores() });
queueStoreSuite({ name: 'sqlite', open: () => openTempStores() });
scheduleStoreSuite({ name: 'sqlite', open: () => openTempStores() });
outboxStoreSuite({ name: 'sqlite', open: () => openTempStores() });
blockageStoreSuite({ name: 'sqlite', open: () => openTempStores() });
