/**
 * @skein/testkit: the property-test harness for Skein workflows. A fault-injecting store
 * wrapper, a virtual clock, a runner that crashes an execution at every write and recovers it,
 * the log invariant checker, and random concurrent workflows to crash.
 */
export {
  type Branch,
  type ChildBranch,
  type ConcurrentWorkflow,
  type ConcurrentWorkflowArbOptions,
  concurrentWorkflow,
  concurrentWorkflowArb,
  describePlan,
  type GroupBranch,
  type SignalBranch,
  type SleepBranch,
  type StepBranch,
} from './concurrent-workflows.js';
export { checkChains } from './crash-checks.js';
export type { CrashStart, CrashTestOptions, WorkflowUnderTest } from './crash-options.js';
export {
  type CrashAtOptions,
  type CrashOutcome,
  type CrashReport,
  crashAt,
  crashAtEveryWrite,
  type Reference,
  referenceRun,
} from './crash-runner.js';
export { type EffectPhase, type EffectRecord, Effects } from './effects.js';
export {
  CrashInvariantError,
  type CrashPoint,
  InjectedFaultError,
  InvariantViolationError,
  SimulatedCrashError,
  type TestkitErrorCode,
  TestkitErrorCodes,
  type Violation,
  type WriteRef,
} from './errors.js';
export {
  type FaultKind,
  type FaultPlan,
  type FaultyStores,
  faultyStore,
  type WriteInfo,
  type WriteOp,
  WriteOps,
} from './faulty-store.js';
export { assertInvariants, checkLog, checkSnapshots, type LogEntry } from './invariants.js';
export { DEFAULT_CLOCK_START, VirtualClock } from './virtual-clock.js';
