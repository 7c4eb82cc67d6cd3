/**
 * @skein/workflow-runtime/spi: for authors of stores and transports. The store interfaces and
 * their request and result types, the append checks every event store applies
 * (`checkAppend`, `statusAfter`), group commit, list cursors and limits, the outbox and queue
 * contracts and their helpers, and the in-memory reference implementations.
 */
export { checkAppend, type ExecutionHead } from './append-checks.js';
export { blockageStands, MAX_BLOCKAGE_MESSAGE } from './blockage.js';
export { CloseHooks } from './close-hooks.js';
export { decodeCursor, encodeCursor } from './cursor.js';
export { reopensTerminal, type StoredEvent, statusAfter } from './events.js';
export {
  checkChunkSeed,
  checkClaimChunk,
  checkFanOutPlan,
  checkItemResults,
  checkSeedBatch,
} from './fan-out-checks.js';
export { endFanOut, newChunk, newItems } from './fan-out-rows.js';
export {
  type CreateDecision,
  decideAdvance,
  decideClaim,
  decideCreate,
  decideDispatch,
  decideRecovery,
  decideRelease,
  decideRenew,
  decideResults,
  holdsChunk,
  holdsCreation,
  INITIAL_WRITE_EPOCH,
  sameSeed,
} from './fan-out-rules.js';
export {
  type ChunkClaim,
  type ChunkClaimRef,
  type ChunkReadyPayload,
  type ChunkRecord,
  type ChunkSeed,
  type ChunkStatus,
  type ClaimChunkRequest,
  type ClaimChunkResult,
  type ClaimedItem,
  type ClaimRefusal,
  type CreateFanOutOutcome,
  type CreateFanOutResult,
  type CreationLeaseRequest,
  chunkCount,
  chunkIdOnShard,
  chunkReadyMessage,
  chunkReadyTopic,
  chunksOnShard,
  DEFAULT_ITEMS_LIMIT,
  DEFAULT_MAX_PROCESSING_FAILURES,
  DEFAULT_RECOVERY_LIMIT,
  type DispatchOptions,
  emptyCounts,
  FANOUT_CHUNK_READY_TOPIC,
  type FanOutCounts,
  type FanOutPlan,
  type FanOutRecord,
  type FanOutStatus,
  type FanOutStore,
  type ItemRecord,
  type ItemResult,
  type ItemStatus,
  MAX_CHUNK_SIZE,
  MAX_SEED_BATCH,
  type Placement,
  planMismatch,
  type RecordedResults,
  type RecoverExpiredOptions,
  type RecoveredChunk,
  type ReleaseChunkOptions,
  type ReleaseOutcome,
  type SeedChunksResult,
  type SeedCursor,
  type SeedOutcome,
} from './fan-out-store.js';
export { type FlushBatch, GroupCommit, type GroupCommitOptions, type Outcome } from './group-commit.js';
export { listLimit } from './list-limit.js';
export {
  MemoryBlockageStore,
  MemoryEventStore,
  type MemoryEventStoreOptions,
  MemoryFanOutStore,
  MemoryLeaseStore,
  MemoryOutboxStore,
  MemoryQueueStore,
  MemoryScheduleStore,
  MemorySignalStore,
  MemorySnapshotStore,
  MemoryTimerStore,
} from './memory/index.js';
export {
  type CheckedListQuery,
  type ClaimDeliveriesOptions,
  type ClaimedDelivery,
  checkClaimOptions,
  checkListQuery,
  checkOutboxMessages,
  checkPruneOptions,
  DEFAULT_MAX_DELIVERY_ATTEMPTS,
  DEFAULT_PRUNE_LIMIT,
  type DeliveryStatus,
  EXECUTION_PENDING_TOPIC,
  type ExecutionPendingPayload,
  exhaustedDiagnostic,
  type ListDeliveriesQuery,
  type OutboxDelivery,
  type OutboxMessage,
  type OutboxStore,
  type PruneDeliveriesOptions,
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
export { type QueueItemRow, queueEntryOf, queueItemOf } from './queues/queue-rows.js';
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
  Blockage,
  BlockageFailure,
  BlockageStore,
  ClaimTimersOptions,
  EventDraft,
  EventStore,
  ExecutionPage,
  ExecutionSummary,
  Lease,
  LeaseStore,
  ListExecutionsQuery,
  PendingSignalsQuery,
  PendingTakeover,
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
