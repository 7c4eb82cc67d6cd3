/**
 * @skein/workflow-runtime: the event model, codec, fold, runtime, workflow context and the
 * store SPIs of Skein.
 */
export {
  checkAppend,
  type ExecutionHead,
  InvalidAppendError,
} from './append-checks.js';
export {
  backingOff,
  blockageStands,
  blockedRetryAt,
  type ExecutionBlocked,
  isBlockingError,
  MAX_BLOCKAGE_MESSAGE,
  repeatsBlockage,
  standingBlockage,
} from './blockage.js';
export type { CancelResult } from './cancellation.js';
export { defaultChildId } from './child-call.js';
export { Client, type ClientOptions, createClient } from './client.js';
export {
  assertPayloadSize,
  Codec,
  createCodec,
  DEFAULT_MAX_PAYLOAD_BYTES,
  decode,
  defaultCodec,
  encode,
  encodedBytes,
  MAX_DEPTH,
  type NotRecordable,
  type Recordable,
} from './codec.js';
export type {
  ChildOptions,
  StepFunction,
  StepInfo,
  StepOptions,
  WaitedSignal,
  WaitForSignalOptions,
  WorkflowContext,
  WorkflowStream,
} from './context-api.js';
export { decodeCursor, encodeCursor } from './cursor.js';
export { type DeadLetterDeps, deadLetterExecution } from './dead-letter.js';
export {
  type DestinationOptions,
  DestinationShares,
  type ShareHolder,
} from './destination-shares.js';
export {
  durationMs,
  durationMsSchema,
  instantSchema,
  MAX_DURATION_MS,
  optionalDurationMs,
  optionalPositiveMs,
  positiveDurationMsSchema,
} from './durations.js';
export * from './errors.js';
export {
  type CallKind,
  type CancelRequestedPayload,
  type ChildSettledPayload,
  type ChildStartedPayload,
  type CompletedPayload,
  type EndedPayload,
  type Envelope,
  type EventPayloads,
  type EventType,
  EventTypes,
  type ExecutionStatus,
  ExecutionStatuses,
  isEventType,
  isTerminalStatus,
  isTerminalType,
  type PayloadOf,
  type SignalReceivedPayload,
  type StartedPayload,
  type StepCompletedPayload,
  type StepFailedPayload,
  type StepStartedPayload,
  type StoredEvent,
  type StreamEntry,
  type SuspendedPayload,
  statusAfter,
  type TakeoverPayload,
  type TimerFiredPayload,
  type TimerScheduledPayload,
  type UpdateAppliedPayload,
} from './events.js';
export type { RunOutcome } from './execution-run.js';
export {
  type FanOutCallDeps,
  type FanOutCallOptions,
  fanOutCall,
  HOME_SHARD,
} from './fan-out-call.js';
export { checkChunkSeed, checkClaimChunk, checkFanOutPlan, checkItemResults } from './fan-out-checks.js';
export { type CreateFanOutOptions, createFanOut, type FanOutSource } from './fan-out-creation.js';
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
export type { FanOutResult } from './fan-out-runtime.js';
export {
  type FanOutAggregate,
  type FanOutItemError,
  type FanOutSummary,
  fanOutSettled,
  itemsInOrder,
  MAX_SUMMARY_ERRORS,
  type SummarizeOptions,
  summarizeFanOut,
} from './fan-out-settlement.js';
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
  type Placement,
  planMismatch,
  type RecordedResults,
  type RecoverExpiredOptions,
  type RecoveredChunk,
  type ReleaseChunkOptions,
  type ReleaseOutcome,
  type SeedOutcome,
} from './fan-out-store.js';
export {
  applyEvent,
  type CallRecord,
  type CompletedStep,
  type ExecutionState,
  type FoldableEvent,
  fold,
  type PendingTimer,
} from './fold.js';
export { type FlushBatch, GroupCommit, type GroupCommitOptions, type Outcome } from './group-commit.js';
export {
  executionIdSchema,
  illFormedReason,
  isWellFormed,
  MAX_EXECUTION_ID_LENGTH,
  nameSchema,
  newId,
  wellFormed,
} from './ids.js';
export { type ExecutionListItem, type ListPage, type ListQuery, listExecutions } from './inspection.js';
export { type LeaseExpiredOptions, leaseExpired } from './lease-expired.js';
export {
  DEFAULT_LEASE_TTL_MS,
  ExecutionLeases,
  type ExecutionLeasesDeps,
  executionLeaseKey,
  type LeaseOptions,
} from './leases.js';
export { DEFAULT_LIST_LIMIT, listLimit } from './list-limit.js';
export { loadState, readHistory, toEnvelope } from './load-state.js';
export {
  type DeliveredSignal,
  type DeliverSignalOptions,
  deliverSignal,
  type LogRequestOptions,
  requestCancel,
} from './log-requests.js';
export type { MaintenanceOptions, MaintenancePass } from './maintenance.js';
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
  type MemoryStores,
  MemoryTimerStore,
  openMemoryStores,
} from './memory/index.js';
export type {
  ObservedError,
  ObservedExecution,
  ObservedSettlement,
  ObservedStep,
  ObservedStepEnd,
  RuntimeObserver,
} from './observers.js';
export {
  type ClaimDeliveriesOptions,
  type ClaimedDelivery,
  checkClaimOptions,
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
export { DEFAULT_GET_EVENT_TIMEOUT_MS, type GetEventOptions } from './published-events.js';
export {
  type ClaimPlan,
  type ClaimPlanInput,
  compareQueueItems,
  freeSlots,
  type LiveSlots,
  planClaims,
} from './queues/claim-plan.js';
export {
  defineQueue,
  type QueueDefinition,
  type QueueOptions,
  QueueRegistry,
} from './queues/define-queue.js';
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
export type { QueueEnqueueOptions } from './queues/queued-enqueue.js';
export { recordableError } from './recordable-error.js';
export {
  type AbandonedPredicate,
  type RecoverAbandonedOptions,
  type RecoverableRuntime,
  type RecoveryReport,
  recoverAbandoned,
  walkExecutions,
} from './recover-abandoned.js';
export { type ResolvedRetryPolicy, type RetryPolicy, resolveRetryPolicy, retryDelay } from './retry.js';
export {
  createRuntime,
  type EnqueueOptions,
  type ExecuteOptions,
  type ExecuteRequest,
  Runtime,
  type RuntimeOptions,
  type StartOptions,
  type WorkflowHandle,
} from './runtime.js';
export {
  defineSchedule,
  type ScheduleCatchUp,
  type ScheduleDefinition,
  type ScheduleOptions,
  type ScheduleOverlap,
  ScheduleRegistry,
  scheduledExecutionId,
} from './schedules/define-schedule.js';
export type { ScheduleState, ScheduleStore } from './schedules/schedule-spi.js';
export {
  DEFAULT_MAX_PENDING_SIGNALS,
  DEFAULT_PENDING_LIMIT,
  maxPendingOf,
  pendingLimitOf,
} from './signal-inbox.js';
export type { SignalOptions, SignalResult } from './signal-send.js';
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
export type { ReadStreamOptions } from './stream-read.js';
export {
  type AnyTask,
  DEFAULT_TASK_ATTEMPTS,
  defineTask,
  describeTaskError,
  parseTaskInput,
  runTaskAttempt,
  type SandboxInvoker,
  type TaskAttemptInfo,
  type TaskDefinition,
  type TaskOutcome,
  type TaskSandbox,
  type TaskSpec,
  taskRetryAt,
} from './task.js';
export {
  TENANT_SCOPE,
  TENANT_SEPARATOR,
  type TenantScoped,
  tenantOf,
} from './tenancy.js';
export { TenantScopedEventStore } from './tenant-scoped-event-store.js';
export {
  TenantScopedBlockageStore,
  TenantScopedLeaseStore,
  TenantScopedSignalStore,
  TenantScopedSnapshotStore,
  TenantScopedTimerStore,
  tenantScopedStores,
} from './tenant-scoped-stores.js';
export { updateInboxName } from './update-inbox.js';
export type { UpdateOptions } from './update-send.js';
export {
  type AnyWorkflow,
  defineWorkflow,
  type MessagesOf,
  parseWith,
  type Schema,
  type SignalInput,
  type SignalName,
  type SignalPayload,
  type SignalSchemas,
  type WorkflowDefinition,
  type WorkflowMessages,
  WorkflowRegistry,
  type WorkflowSpec,
} from './workflow.js';
