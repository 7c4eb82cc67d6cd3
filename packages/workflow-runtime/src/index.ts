/**
 * @skein/workflow-runtime: the event model, codec, fold, runtime, workflow context and the
 * store SPIs of Skein.
 */
export {
  type ExecutionHead,
  InvalidAppendError,
  checkAppend,
} from './append-checks.js';
export { DEFAULT_MAX_PAYLOAD_BYTES, assertPayloadSize, decode, encode, encodedBytes } from './codec.js';
export { decodeCursor, encodeCursor } from './cursor.js';
export * from './errors.js';
export {
  type CallKind,
  type CompletedPayload,
  type EndedPayload,
  type Envelope,
  type EventType,
  EventTypes,
  type ExecutionStatus,
  ExecutionStatuses,
  type StartedPayload,
  type StepCompletedPayload,
  type StepFailedPayload,
  type StepStartedPayload,
  type StoredEvent,
  type SuspendedPayload,
  type TakeoverPayload,
  type TimerFiredPayload,
  type TimerScheduledPayload,
  isEventType,
  isTerminalStatus,
  isTerminalType,
  statusAfter,
} from './events.js';
export { type FlushBatch, GroupCommit, type GroupCommitOptions, type Outcome } from './group-commit.js';
export {
  MemoryEventStore,
  type MemoryEventStoreOptions,
  MemoryLeaseStore,
  MemorySnapshotStore,
  MemoryTimerStore,
  openMemoryStores,
} from './memory/index.js';
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
  Snapshot,
  SnapshotStore,
  Stores,
  Timer,
  TimerStore,
} from './spi.js';
export type { StepInfo, StepOptions, WorkflowContext } from './context-api.js';
export { type RunOutcome, recordableError } from './execution-run.js';
export {
  type CallRecord,
  type CompletedStep,
  type ExecutionState,
  type FoldableEvent,
  type PendingTimer,
  applyEvent,
  fold,
} from './fold.js';
export { MAX_EXECUTION_ID_LENGTH, newId } from './ids.js';
export { loadState, readHistory, toEnvelope } from './load-state.js';
export { type ResolvedRetryPolicy, type RetryPolicy, resolveRetryPolicy, retryDelay } from './retry.js';
export {
  type ExecuteRequest,
  Runtime,
  type RuntimeOptions,
  type StartOptions,
  type WorkflowHandle,
  createRuntime,
} from './runtime.js';
export {
  type AnyWorkflow,
  type Schema,
  type WorkflowDefinition,
  WorkflowRegistry,
  type WorkflowSpec,
  defineWorkflow,
  parseWith,
} from './workflow.js';
