/**
 * Not a test of its own: `broken-stores.test.ts` runs this file in a child vitest and reads
 * which cases failed. The memory store runs as the control: every case must pass on it.
 */
import { eventStoreSuite } from '@skein/conformance';
import { MemoryEventStore } from '@skein/workflow-runtime';
import { brokenEventStores, storesWith } from './index.js';

eventStoreSuite({ name: 'control-memory', open: () => storesWith(new MemoryEventStore()) });
for (const [name, make] of Object.entries(brokenEventStores)) {
  eventStoreSuite({ name, open: () => storesWith(make()) });
}
