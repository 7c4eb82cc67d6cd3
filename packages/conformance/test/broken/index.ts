/** Deliberately broken stores; `broken-stores.test.ts` proves the suites reject each one. */
import type { EventStore, OutboxStore, Stores } from '@skein/workflow-runtime';
import {
  type FanOutStore,
  MemoryEventStore,
  MemoryLeaseStore,
  MemoryOutboxStore,
  MemorySignalStore,
  MemorySnapshotStore,
  MemoryTimerStore,
  type QueueStore,
  type SignalStore,
} from '@skein/workflow-runtime/spi';
import { BatchWideFailureEventStore } from './batch-wide-failure.js';
import { NoPartitionsQueueStore, PerOwnerLimitQueueStore } from './broken-queues.js';
import { DuplicateSeqEventStore } from './duplicate-seq.js';
import { NoAttemptGuardFanOuts, ReleaseBeforeResultsFanOuts, UnseededDispatchFanOuts } from './fan-outs.js';
import { GlobalSignalIdStore } from './global-signal-ids.js';
import { NoFenceCheckEventStore } from './no-fence-check.js';
import { AnyTokenOutbox, BeforeAppendEventStore, EveryAgePruneOutbox } from './outbox.js';
import { TakeoverAnyStatusEventStore } from './takeover-any-status.js';
import { RacyBoundInboxStore, UnboundedInboxStore } from './unbounded-inbox.js';

/** Every broken event store, by the name its suite run is registered under. */
export const brokenEventStores: Record<string, () => EventStore> = {
  'broken-no-fence-check': () => new NoFenceCheckEventStore(),
  'broken-duplicate-seq': () => new DuplicateSeqEventStore(),
  'broken-batch-wide-failure': () => new BatchWideFailureEventStore(),
  'broken-takeover-any-status': () => new TakeoverAnyStatusEventStore(),
};

/** Every broken signal store, by the name its suite run is registered under. */
export const brokenSignalStores: Record<string, () => SignalStore> = {
  'broken-global-signal-ids': () => new GlobalSignalIdStore(),
  'broken-unbounded-inbox': () => new UnboundedInboxStore(),
  'broken-racy-inbox-bound': () => new RacyBoundInboxStore(),
};

/** Every broken queue store, by the name its suite run is registered under. */
export const brokenQueueStores: Record<string, () => QueueStore> = {
  'broken-per-owner-limit': () => new PerOwnerLimitQueueStore(),
  'broken-no-partitions': () => new NoPartitionsQueueStore(),
};

/** A queue store and `close`, as the queue-store suite opens them. */
export function storesWithQueues(queues: QueueStore): { queues: QueueStore; close(): void } {
  return { queues, close() {} };
}

/** Every broken outbox (with the event store that feeds it), by the name its suite run is registered under. */
export const brokenOutboxes: Record<
  string,
  () => { events: EventStore; outbox: OutboxStore; close(): void }
> = {
  'broken-outbox-before-append': () => {
    const outbox = new MemoryOutboxStore();
    return { events: new BeforeAppendEventStore(outbox), outbox, close() {} };
  },
  'broken-outbox-any-token': () => {
    const outbox = new AnyTokenOutbox();
    return { events: new MemoryEventStore({ outbox }), outbox, close() {} };
  },
  'broken-outbox-prunes-retired': () => {
    const outbox = new EveryAgePruneOutbox();
    return { events: new MemoryEventStore({ outbox }), outbox, close() {} };
  },
};

/** Whole stores around one event store (and a signal store), the other stores in memory. */
export function storesWith(events: EventStore, signals: SignalStore = new MemorySignalStore()): Stores {
  return {
    events,
    snapshots: new MemorySnapshotStore(),
    timers: new MemoryTimerStore(),
    leases: new MemoryLeaseStore(),
    signals,
    close() {},
  };
}

/** Whole stores around one signal store, the others in memory. */
export function storesWithSignals(signals: SignalStore): Stores {
  return storesWith(new MemoryEventStore(), signals);
}

/** Every broken fan-out store (with its outbox), by the name its suite run is registered under. */
export const brokenFanOuts: Record<
  string,
  () => { fanOuts: FanOutStore; outbox: OutboxStore; close(): void }
> = {
  'broken-fan-out-no-attempt-guard': () => {
    const outbox = new MemoryOutboxStore();
    return { fanOuts: new NoAttemptGuardFanOuts(outbox), outbox, close() {} };
  },
  'broken-fan-out-unseeded-dispatch': () => {
    const outbox = new MemoryOutboxStore();
    return { fanOuts: new UnseededDispatchFanOuts(outbox), outbox, close() {} };
  },
  'broken-fan-out-release-before-results': () => {
    const outbox = new MemoryOutboxStore();
    return { fanOuts: new ReleaseBeforeResultsFanOuts(outbox), outbox, close() {} };
  },
};
