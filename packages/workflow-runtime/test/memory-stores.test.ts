/** The in-memory reference stores pass every conformance suite. */
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
import { openMemoryStores } from '@skein/workflow-runtime';

const open = () => openMemoryStores();

eventStoreSuite({ name: 'memory', open });
snapshotStoreSuite({ name: 'memory', open });
timerStoreSuite({ name: 'memory', open });
leaseStoreSuite({ name: 'memory', open });
signalStoreSuite({ name: 'memory', open });
queueStoreSuite({ name: 'memory', open });
scheduleStoreSuite({ name: 'memory', open: open });
outboxStoreSuite({ name: 'memory', open });
blockageStoreSuite({ name: 'memory', open });
