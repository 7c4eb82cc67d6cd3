/**
 * Stable codes of the sandbox's errors and the plain-data form of an invocation's failure. No
 * dependencies: worker threads load this file.
 */

/** Stable codes of the sandbox's errors. */
export const SandboxErrorCodes = {
  FuelExhausted: 'SANDBOX_FUEL_EXHAUSTED',
  MemoryLimit: 'SANDBOX_MEMORY_LIMIT',
  Timeout: 'SANDBOX_TIMEOUT',
  LogLimit: 'SANDBOX_LOG_LIMIT',
  Trap: 'SANDBOX_TRAP',
  EvaluatorError: 'SANDBOX_EVALUATOR_ERROR',
  ArtifactMismatch: 'SANDBOX_ARTIFACT_MISMATCH',
  ContractViolation: 'SANDBOX_CONTRACT_VIOLATION',
  BuildFailed: 'SANDBOX_BUILD_FAILED',
  PoolClosed: 'SANDBOX_POOL_CLOSED',
} as const;

/** One of {@link SandboxErrorCodes}. */
export type SandboxErrorCode = (typeof SandboxErrorCodes)[keyof typeof SandboxErrorCodes];

/** Which resource limit a {@link SandboxMemoryLimitError} hit. */
export type ResourceLimit = 'memoryBytes' | 'tableElements' | 'instances';

/** Which log limit a {@link SandboxLogLimitError} hit. */
export type LogLimit = 'maxLogs' | 'maxLogBytes';

/** An invocation's failure as plain data, the form it crosses the worker-thread boundary in. */
export type SandboxErrorData =
  | { code: typeof SandboxErrorCodes.FuelExhausted; fuel: number }
  | { code: typeof SandboxErrorCodes.MemoryLimit; limit: ResourceLimit; value: number }
  | { code: typeof SandboxErrorCodes.LogLimit; limit: LogLimit; value: number }
  | { code: typeof SandboxErrorCodes.Trap; reason: string }
  | { code: typeof SandboxErrorCodes.EvaluatorError; reason: string };
