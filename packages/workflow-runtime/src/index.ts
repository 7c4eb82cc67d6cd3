/**
 * @skein/workflow-runtime: the event model, codec, fold, runtime, workflow context and the
 * store SPIs of Skein.
 */
export {
  checkAppend,
  type ExecutionHead,
  InvalidAppendError,
} from './append-checks.js';
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
} from './context-api.js';
export { decodeCursor, encodeCursor } from './cursor.js';
export { type DeadLetterDeps, deadLetterExecution } from './dead-letter.js';
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
  type SuspendedPayload,
  statusAfter,
  type TakeoverPayload,
  type TimerFiredPayload,
  type TimerScheduledPayload,
} from './events.js';
export type { RunOutcome } from './execution-run.js';
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
  MemoryEventStore,
  type MemoryEventStoreOptions,
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
export {
  defineQueue,
  type QueueDefinition,
  type QueueOptions,
  QueueRegistry,
} from './queues/define-queue.js';
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
export {
  TENANT_SCOPE,
  TENANT_SEPARATOR,
  type TenantScoped,
  tenantOf,
} from './tenancy.js';
export { TenantScopedEventStore } from './tenant-scoped-event-store.js';
export {
  TenantScopedLeaseStore,
  TenantScopedSignalStore,
  TenantScopedSnapshotStore,
  TenantScopedTimerStore,
  tenantScopedStores,
} from './tenant-scoped-stores.js';
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
