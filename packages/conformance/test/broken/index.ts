/** Deliberately broken stores; `broken-stores.test.ts` proves the suites reject each one. */
import {
  type EventStore,
  MemoryLeaseStore,
  MemorySignalStore,
  MemorySnapshotStore,
  MemoryTimerStore,
  type Stores,
} from '@skein/workflow-runtime';
import { BatchWideFailureEventStore } from './batch-wide-failure.js';
import { DuplicateSeqEventStore } from './duplicate-seq.js';
import { NoFenceCheckEventStore } from './no-fence-check.js';

/** Every broken event store, by the name its suite run is registered under. */
export const brokenEventStores: Record<string, () => EventStore> = {
  'broken-no-fence-check': () => new NoFenceCheckEventStore(),
  'broken-duplicate-seq': () => new DuplicateSeqEventStore(),
  'broken-batch-wide-failure': () => new BatchWideFailureEventStore(),
};

/** Whole stores around one event store, the other stores in memory. */
export function storesWith(events: EventStore): Stores {
  return {
    events,
    snapshots: new MemorySnapshotStore(),
    timers: new MemoryTimerStore(),
    leases: new MemoryLeaseStore(),
    signals: new MemorySignalStore(),
    close() {},
  };
}
