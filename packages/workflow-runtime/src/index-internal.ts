/**
 * @skein/workflow-runtime/internal: what Skein's own packages share (leases, validation
 * helpers, the codec, ids, durations, log requests). Internal: not a public API, and it may
 * change in any release without notice.
 */

export {
  backingOff,
  blockedRetryAt,
  isBlockingError,
  repeatsBlockage,
  standingBlockage,
} from './blockage.js';
export { defaultChildId } from './child-call.js';
export {
  assertPayloadSize,
  Codec,
  createCodec,
  decode,
  defaultCodec,
  encode,
  encodedBytes,
  MAX_DEPTH,
} from './codec.js';
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
export { isEventType, isTerminalType } from './events.js';
export type { RunOutcome } from './execution-run.js';
export { type FanOutCallDeps, fanOutCall, HOME_SHARD } from './fan-out-call.js';
export { type CreateFanOutOptions, createFanOut } from './fan-out-creation.js';
export {
  fanOutSettled,
  itemsInOrder,
  MAX_SUMMARY_ERRORS,
  type SummarizeOptions,
  summarizeFanOut,
} from './fan-out-settlement.js';
export { applyEvent, type FoldableEvent } from './fold.js';
export { writeFork } from './fork.js';
export {
  executionIdSchema,
  illFormedReason,
  isWellFormed,
  MAX_EXECUTION_ID_LENGTH,
  nameSchema,
  newId,
  wellFormed,
} from './ids.js';
export { listExecutions } from './inspection.js';
export { type LeaseExpiredOptions, leaseExpired } from './lease-expired.js';
export {
  ExecutionLeases,
  type ExecutionLeasesDeps,
  executionLeaseKey,
  type FirstAppendSource,
  SUPERVISOR_LEADER_KEY,
  SUPERVISOR_PRESENCE_KEY,
} from './leases.js';
export { toEnvelope } from './load-state.js';
export {
  type DeliveredSignal,
  type DeliverSignalOptions,
  deliverSignal,
  type LogRequestOptions,
  requestCancel,
} from './log-requests.js';
export { QueueRegistry } from './queues/define-queue.js';
export { recordableError } from './recordable-error.js';
export { walkExecutions } from './recover-abandoned.js';
export { requestResume } from './redrive.js';
export { type ResolvedRetryPolicy, resolveRetryPolicy, retryDelay } from './retry.js';
export { ScheduleRegistry } from './schedules/define-schedule.js';
export {
  DEFAULT_TASK_ATTEMPTS,
  describeTaskError,
  parseTaskInput,
  runTaskAttempt,
  type TaskOutcome,
  taskRetryAt,
} from './task.js';
export { TENANT_SCOPE } from './tenancy.js';
export { updateInboxName } from './update-inbox.js';
export { parseWith, WorkflowRegistry } from './workflow.js';
