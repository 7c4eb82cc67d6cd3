// examples/readme/conformance.ts: run every store suite on your stores (in a *.test.ts file)
import {
  eventStoreSuite,
  leaseStoreSuite,
  queueStoreSuite,
  scheduleStoreSuite,
  signalStoreSuite,
  snapshotStoreSuite,
  timerStoreSuite,
} from '@skein/conformance';
import { openMemoryStores } from '@skein/workflow-runtime';

const open = () => openMemoryStores(); // your store's opener: fresh, empty stores for every case

eventStoreSuite({ name: 'my-store', open }); // a gap it cannot close: unsupported: { flag: 'reason' }
snapshotStoreSuite({ name: 'my-store', open });
timerStoreSuite({ name: 'my-store', open });
leaseStoreSuite({ name: 'my-store', open });
signalStoreSuite({ name: 'my-store', open });
queueStoreSuite({ name: 'my-store', open }); // with stores.queues (docs/queues.md)
scheduleStoreSuite({ name: 'my-store', open }); // with stores.schedules (docs/schedules.md)
