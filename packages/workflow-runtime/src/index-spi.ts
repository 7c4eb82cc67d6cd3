/**
 * @skein/workflow-runtime/spi: for authors of stores and transports. The store interfaces and
 * their request and result types, the append checks every event store applies
 * (`checkAppend`, `statusAfter`), group commit, list cursors and limits, the outbox and queue
 * contracts and their helpers, and the in-memory reference implementations.
 */
export { checkAppend, type ExecutionHead } from './append-checks.js';
export { decodeCursor, encodeCursor } from './cursor.js';
export { type StoredEvent, statusAfter } from './events.js';
export { type FlushBatch, GroupCommit, type GroupCommitOptions, type Outcome } from './group-commit.js';
export { listLimit } from './list-limit.js';
export {
  MemoryEventStore,
  type MemoryEventStoreOptions,
  MemoryLeaseStore,
  MemoryOutboxStore,
  MemoryQueueStore,
  MemoryScheduleStore,
  MemorySignalStore,
  MemorySnapshotStore,
  MemoryTimerStore,
} from './memory/index.js';
export {
  type ClaimDeliveriesOptions,
  type ClaimedDelivery,
  checkClaimOptions,
  checkOutboxMessages,
  DEFAULT_MAX_DELIVERY_ATTEMPTS,
  type DeliveryStatus,
  EXECUTION_PENDING_TOPIC,
  type ExecutionPendingPayload,
  exhaustedDiagnostic,
  type ListDeliveriesQuery,
  type OutboxDelivery,
  type OutboxMessage,
  type OutboxStore,
  type RescheduleOptions,
  type RescheduleOutcome,
  unsettledDiagnostic,
} from './outbox.js';
export {
  type ClaimPlan,
  type ClaimPlanInput,
  compareQueueItems,
  freeSlots,
  type LiveSlots,
  planClaims,
} from './queues/claim-plan.js';
export type {
  ClaimQueueOptions,
  QueueEnqueueResult,
  QueueEntry,
  QueueItem,
  QueueItemState,
  QueueLimits,
  QueueStore,
} from './queues/queue-spi.js';
export type { ScheduleStore } from './schedules/schedule-spi.js';
export { DEFAULT_PENDING_LIMIT, maxPendingOf, pendingLimitOf } from './signal-inbox.js';
export type {
  AppendRequest,
  AppendResult,
  ClaimTimersOptions,
  EventDraft,
  EventStore,
  ExecutionPage,
  ExecutionSummary,
  Lease,
  LeaseStore,
  ListExecutionsQuery,
  PendingSignalsQuery,
  SendSignalOptions,
  Signal,
  SignalSendOutcome,
  SignalStore,
  Snapshot,
  SnapshotStore,
  Stores,
  Timer,
  TimerStore,
} from './spi.js';
