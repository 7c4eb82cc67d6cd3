/** In-memory implementations of every store SPI. */
import { CloseHooks } from '../close-hooks.js';
import type { Stores } from '../spi.js';
import { MemoryBlockageStore } from './memory-blockage-store.js';
import { MemoryEventStore, type MemoryEventStoreOptions } from './memory-event-store.js';
import { MemoryFanOutStore } from './memory-fan-out-store.js';
import { MemoryLeaseStore } from './memory-lease-store.js';
import { MemoryOutboxStore } from './memory-outbox-store.js';
import { MemoryQueueStore } from './memory-queue-store.js';
import { MemoryScheduleStore } from './memory-schedule-store.js';
import { MemorySignalStore } from './memory-signal-store.js';
import { MemorySnapshotStore } from './memory-snapshot-store.js';
import { MemoryTimerStore } from './memory-timer-store.js';

export { MemoryBlockageStore } from './memory-blockage-store.js';
export { MemoryEventStore, type MemoryEventStoreOptions } from './memory-event-store.js';
export { MemoryFanOutStore } from './memory-fan-out-store.js';
export { MemoryLeaseStore } from './memory-lease-store.js';
export { MemoryOutboxStore } from './memory-outbox-store.js';
export { MemoryQueueStore } from './memory-queue-store.js';
export { MemoryScheduleStore } from './memory-schedule-store.js';
export { MemorySignalStore } from './memory-signal-store.js';
export { MemorySnapshotStore } from './memory-snapshot-store.js';
export { MemoryTimerStore } from './memory-timer-store.js';

/** Every store in memory, the outbox, the blockages and the fan-out tables included. */
export interface MemoryStores extends Stores {
  outbox: MemoryOutboxStore;
  blockages: MemoryBlockageStore;
  fanOuts: MemoryFanOutStore;
}

/**
 * Every store in memory. For tests and examples; nothing survives the process.
 * @example
 * const runtime = createRuntime({ stores: openMemoryStores(), workflows: [order] });
 */
export function openMemoryStores(options: MemoryEventStoreOptions = {}): MemoryStores {
  const outbox = options.outbox ?? new MemoryOutboxStore();
  const events = new MemoryEventStore({ ...options, outbox });
  const hooks = new CloseHooks();
  return {
    events,
    outbox,
    fanOuts: new MemoryFanOutStore(outbox),
    snapshots: new MemorySnapshotStore(),
    timers: new MemoryTimerStore((executionId) => events.workflowOf(executionId)),
    leases: new MemoryLeaseStore(),
    signals: new MemorySignalStore(),
    queues: new MemoryQueueStore(),
    schedules: new MemoryScheduleStore(),
    blockages: new MemoryBlockageStore(),
    beforeClose: (hook) => hooks.add(hook),
    close: () => hooks.run(),
  };
}
