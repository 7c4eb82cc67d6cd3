/**
 * @skein/workflow-runtime: what a workflow author and an operator use: define workflows,
 * queues and schedules, create a runtime or a client, read state and history, the errors, the
 * event model, the observers, the in-memory and tenant-scoped stores. Store and transport
 * authors import `@skein/workflow-runtime/spi`; what sibling packages share is in
 * `@skein/workflow-runtime/internal`.
 */
export { InvalidAppendError } from './append-checks.js';
export type { ExecutionBlocked } from './blockage.js';
export type { CancelResult } from './cancellation.js';
export type { ChildHandle } from './child-handle.js';
export { Client, type ClientOptions, createClient } from './client.js';
export { DEFAULT_MAX_PAYLOAD_BYTES, type NotRecordable, type Recordable } from './codec.js';
export type {
  ChildOptions,
  HistorySize,
  StepFunction,
  StepInfo,
  StepOptions,
  WaitedSignal,
  WaitForSignalOptions,
  WorkflowContext,
  WorkflowStream,
} from './context-api.js';
export type { DeadlineOptions } from './deadlines.js';
export { type DestinationOptions, DestinationShares, type ShareHolder } from './destination-shares.js';
export * from './errors.js';
export {
  type CallKind,
  type CancelRequestedPayload,
  type CarriedSignal,
  type ChildSettledPayload,
  type ChildStartedPayload,
  type CompletedPayload,
  type ContinuedFrom,
  type ContinuedPayload,
  type DeadlineRecord,
  type EndedPayload,
  type Envelope,
  type EventPayloads,
  type EventType,
  EventTypes,
  type ExecutionStatus,
  ExecutionStatuses,
  isTerminalStatus,
  type PayloadOf,
  type RedrivenPayload,
  type SignalReceivedPayload,
  type StartedPayload,
  type StepCompletedPayload,
  type StepFailedPayload,
  type StepStartedPayload,
  type StreamEntry,
  type SuspendedPayload,
  type TakeoverPayload,
  type TimerFiredPayload,
  type TimerScheduledPayload,
  type UpdateAppliedPayload,
} from './events.js';
export type { FanOutCallOptions } from './fan-out-call.js';
export type { FanOutSource } from './fan-out-creation.js';
export type { FanOutResult } from './fan-out-runtime.js';
export type { FanOutAggregate, FanOutItemError, FanOutSummary } from './fan-out-settlement.js';
export type { FanOutStore } from './fan-out-store.js';
export { type CallRecord, type CompletedStep, type ExecutionState, fold, type PendingTimer } from './fold.js';
export type { ForkOptions } from './fork.js';
export type { ExecutionListItem, ListPage, ListQuery } from './inspection.js';
export { DEFAULT_LEASE_TTL_MS, type LeaseOptions } from './leases.js';
export { DEFAULT_LIST_LIMIT } from './list-limit.js';
export { loadState, readHistory } from './load-state.js';
export type { MaintenanceOptions, MaintenancePass } from './maintenance.js';
export { type MemoryStores, openMemoryStores } from './memory/index.js';
export type {
  ObservedError,
  ObservedExecution,
  ObservedSettlement,
  ObservedStep,
  ObservedStepEnd,
  RuntimeObserver,
} from './observers.js';
export type { OutboxStore } from './outbox.js';
export type { OutboxHeadersHook } from './outbox-headers.js';
export { DEFAULT_GET_EVENT_TIMEOUT_MS, type GetEventOptions } from './published-events.js';
export { defineQueue, type QueueDefinition, type QueueOptions } from './queues/define-queue.js';
export type { QueueEnqueueOptions } from './queues/queued-enqueue.js';
export {
  type AbandonedPredicate,
  type RecoverAbandonedOptions,
  type RecoverableRuntime,
  type RecoveryReport,
  recoverAbandoned,
} from './recover-abandoned.js';
export type { ResumeOptions, ResumeResult } from './redrive.js';
export { type CacheOptions, DEFAULT_MAX_RESIDENT } from './resident-bodies.js';
export type { ResultOptions } from './result-wait.js';
export type { RetryPolicy } from './retry.js';
export type { NoRetryReason, StepRetryPolicy } from './retry-controls.js';
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
  scheduledExecutionId,
} from './schedules/define-schedule.js';
export type { ScheduleState } from './schedules/schedule-spi.js';
export type { SentSignal } from './signal-call.js';
export { DEFAULT_MAX_PENDING_SIGNALS } from './signal-inbox.js';
export type { SignalOptions, SignalResult } from './signal-send.js';
export type { StartSignal } from './signal-with-start.js';
export type { BlockageStore, EventStore, LeaseStore, SnapshotStore, Stores, TimerStore } from './spi.js';
export type { ReadStreamOptions } from './stream-read.js';
export {
  type AnyTask,
  defineTask,
  type SandboxInvoker,
  type TaskAttemptInfo,
  type TaskDefinition,
  type TaskSandbox,
  type TaskSpec,
} from './task.js';
export { TENANT_SEPARATOR, type TenantScoped, tenantOf } from './tenancy.js';
export { TenantScopedEventStore } from './tenant-scoped-event-store.js';
export {
  TenantScopedBlockageStore,
  TenantScopedLeaseStore,
  TenantScopedSignalStore,
  TenantScopedSnapshotStore,
  TenantScopedTimerStore,
  tenantScopedStores,
} from './tenant-scoped-stores.js';
export type { UpdateOptions } from './update-send.js';
export {
  type AnyWorkflow,
  defineWorkflow,
  type MessagesOf,
  type Schema,
  type SignalInput,
  type SignalName,
  type SignalPayload,
  type SignalSchemas,
  type UpdateInput,
  type UpdateName,
  type UpdatePayload,
  type UpdateSchemas,
  type WorkflowDefinition,
  type WorkflowMessages,
  type WorkflowSpec,
} from './workflow.js';
