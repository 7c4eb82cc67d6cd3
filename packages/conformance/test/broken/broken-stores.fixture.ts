/**
 * Not a test of its own: `broken-stores.test.ts` runs this file in a child vitest and reads
 * which cases failed. The memory stores run as the control: every case must pass on them.
 */
import {
  eventStoreSuite,
  fanOutStoreSuite,
  outboxStoreSuite,
  queueStoreSuite,
  signalStoreSuite,
} from '@skein/conformance';
import { openMemoryStores } from '@skein/workflow-runtime';
import { MemoryEventStore, MemoryQueueStore, MemorySignalStore } from '@skein/workflow-runtime/spi';
import {
  brokenEventStores,
  brokenFanOuts,
  brokenOutboxes,
  brokenQueueStores,
  brokenSignalStores,
  storesWith,
  storesWithQueues,
  storesWithSignals,
} from './index.js';

eventStoreSuite({ name: 'control-memory', open: () => storesWith(new MemoryEventStore()) });
for (const [name, make] of Object.entries(brokenEventStores)) {
  eventStoreSuite({ name, open: () => storesWith(make()) });
}
signalStoreSuite({ name: 'control-memory', open: () => storesWithSignals(new MemorySignalStore()) });
for (const [name, make] of Object.entries(brokenSignalStores)) {
  signalStoreSuite({ name, open: () => storesWithSignals(make()) });
}
queueStoreSuite({ name: 'control-memory', open: () => storesWithQueues(new MemoryQueueStore()) });
for (const [name, make] of Object.entries(brokenQueueStores)) {
  queueStoreSuite({ name, open: () => storesWithQueues(make()) });
}
outboxStoreSuite({ name: 'control-memory', open: () => openMemoryStores() });
for (const [name, make] of Object.entries(brokenOutboxes)) {
  outboxStoreSuite({ name, open: make });
}
fanOutStoreSuite({ name: 'control-memory', open: () => openMemoryStores() });
for (const [name, make] of Object.entries(brokenFanOuts)) {
  fanOutStoreSuite({ name, open: make });
}
