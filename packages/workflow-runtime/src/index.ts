/**
 * @skein/workflow-runtime: what a workflow author and an operator use: define workflows,
 * queues and schedules, create a runtime or a client, read state and history, the errors, the
 * event model, the observers, the in-memory and tenant-scoped stores. Store and transport
 * authors import `@skein/workflow-runtime/spi`; what sibling packages share is in
 * `@skein/workflow-runtime/internal`.
 */
export { InvalidAppendError } from './append-checks.js';
export type { CancelResult } from './cancellation.js';
export { Client, type ClientOptions, createClient } from './client.js';
export { DEFAULT_MAX_PAYLOAD_BYTES } from './codec.js';
export type {
  ChildOptions,
  StepInfo,
  StepOptions,
  WaitForSignalOptions,
  WorkflowContext,
} from './context-api.js';
export * from './errors.js';
export {
  type CallKind,
  type CancelRequestedPayload,
  type ChildSettledPayload,
  type ChildStartedPayload,
  type CompletedPayload,
  type EndedPayload,
  type Envelope,
  type EventType,
  EventTypes,
  type ExecutionStatus,
  ExecutionStatuses,
  isTerminalStatus,
  type SignalReceivedPayload,
  type StartedPayload,
  type StepCompletedPayload,
  type StepFailedPayload,
  type StepStartedPayload,
  type SuspendedPayload,
  type TakeoverPayload,
  type TimerFiredPayload,
  type TimerScheduledPayload,
} from './events.js';
export { type CallRecord, type CompletedStep, type ExecutionState, fold, type PendingTimer } from './fold.js';
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
export { defineQueue, type QueueDefinition, type QueueOptions } from './queues/define-queue.js';
export type { QueueEnqueueOptions } from './queues/queued-enqueue.js';
export {
  type AbandonedPredicate,
  type RecoverAbandonedOptions,
  type RecoverableRuntime,
  type RecoveryReport,
  recoverAbandoned,
} from './recover-abandoned.js';
export type { RetryPolicy } from './retry.js';
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
export { DEFAULT_MAX_PENDING_SIGNALS } from './signal-inbox.js';
export type { SignalOptions, SignalResult } from './signal-send.js';
export type { EventStore, LeaseStore, SnapshotStore, Stores, TimerStore } from './spi.js';
export { TENANT_SEPARATOR, type TenantScoped, tenantOf } from './tenancy.js';
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
  type Schema,
  type WorkflowDefinition,
  type WorkflowSpec,
} from './workflow.js';
