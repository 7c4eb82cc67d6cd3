/**
 * @skein/conformance: reusable vitest suites that every store implementation runs against
 * itself. Each suite is a function taking `{ name, open }`; `open()` returns fresh stores.
 * `textBoundarySuite` runs a runtime over the stores: every string key that reaches them is
 * well-formed Unicode.
 */
export { type BlockageStoreSuiteOptions, blockageStoreSuite } from './blockage-store-suite.js';
export {
  type DispatcherSuiteOptions,
  type DispatcherUnderTest,
  dispatcherSuite,
} from './dispatcher-suite.js';
export {
  type EventStoreSuiteOptions,
  type EventStoreUnsupported,
  eventStoreSuite,
} from './event-store-suite.js';
export {
  type FanOutStoreSuiteOptions,
  type FanOutStores,
  fanOutStoreSuite,
} from './fan-out-store-suite.js';
export type { StoresWith, SuiteOptions } from './harness.js';
export { type LeaseStoreSuiteOptions, leaseStoreSuite } from './lease-store-suite.js';
export { type OutboxStoreSuiteOptions, outboxStoreSuite } from './outbox-store-suite.js';
export {
  type QueueStoreSuiteOptions,
  type QueueStoreUnderTest,
  queueStoreSuite,
} from './queue-store-suite.js';
export {
  type ScheduleStoreSuiteOptions,
  type ScheduleStoreUnderTest,
  scheduleStoreSuite,
} from './schedule-store-suite.js';
export { type SignalStoreSuiteOptions, signalStoreSuite } from './signal-store-suite.js';
export { type SnapshotStoreSuiteOptions, snapshotStoreSuite } from './snapshot-store-suite.js';
export { type TextBoundarySuiteOptions, textBoundarySuite } from './text-boundary-suite.js';
export { type TimerStoreSuiteOptions, timerStoreSuite } from './timer-store-suite.js';
export {
  type TransportSuiteOptions,
  type TransportUnderTest,
  transportSuite,
} from './transport-suite.js';
export {
  type WorkerRuntimeSuiteOptions,
  type WorkerRuntimeUnderTest,
  workerRuntimeSuite,
} from './worker-runtime-suite.js';
