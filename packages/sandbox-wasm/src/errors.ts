/**
 * Errors of the sandbox. Every error a guest can cause extends `NonRetryableError` of
 * @skein/workflow-runtime, so inside `ctx.step` it fails the step at once (not retried by
 * default) and the step failure records its `code`. Across the worker-thread boundary errors
 * travel as plain data (`SandboxErrorData`), never as instances.
 */
import { type ErrorClass, NonRetryableError, SkeinError } from '@skein/workflow-runtime';
import {
  type LogLimit,
  type ResourceLimit,
  type SandboxErrorCode,
  SandboxErrorCodes,
  type SandboxErrorData,
} from './codes.js';

export { type LogLimit, type ResourceLimit, type SandboxErrorCode, SandboxErrorCodes, type SandboxErrorData };

/** Base of every error a component or an invocation of it causes; not retryable by default. */
export class SandboxError extends NonRetryableError {
  declare readonly code: SandboxErrorCode;

  constructor(
    code: SandboxErrorCode,
    /** sha256 of the component's artifact. */
    readonly component: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`component ${component.slice(0, 12)}: ${message}`, { ...options, code });
  }
}

/** The invocation used up its fuel (deterministic: a replay with the same input and fuel ends here too). */
export class SandboxFuelExhaustedError extends SandboxError {
  constructor(
    component: string,
    readonly fuel: number,
  ) {
    super(SandboxErrorCodes.FuelExhausted, component, `ran out of fuel (limit ${fuel})`);
  }
}

/** The invocation reached its memory, table or instance limit. */
export class SandboxMemoryLimitError extends SandboxError {
  constructor(
    component: string,
    readonly limit: ResourceLimit,
    readonly value: number,
  ) {
    super(SandboxErrorCodes.MemoryLimit, component, `reached its ${limit} limit (${value})`);
  }
}

/** The invocation ran past its wall-clock `timeoutMs`; its worker thread was terminated and replaced. */
export class SandboxTimeoutError extends SandboxError {
  constructor(
    component: string,
    readonly timeoutMs: number,
  ) {
    super(SandboxErrorCodes.Timeout, component, `did not finish within ${timeoutMs} ms`);
  }
}

/** The guest logged more messages or bytes than the invocation allows. */
export class SandboxLogLimitError extends SandboxError {
  constructor(
    component: string,
    readonly limit: LogLimit,
    readonly value: number,
  ) {
    super(SandboxErrorCodes.LogLimit, component, `logged past its ${limit} limit (${value})`);
  }
}

/** The guest trapped (unreachable, out-of-bounds access, stack overflow, a broken component). */
export class SandboxTrapError extends SandboxError {
  constructor(
    component: string,
    readonly reason: string,
  ) {
    super(SandboxErrorCodes.Trap, component, `trapped: ${reason}`);
  }
}

/** The evaluator returned `err(reason)` for this input. */
export class SandboxEvaluatorError extends SandboxError {
  constructor(
    component: string,
    readonly reason: string,
  ) {
    super(SandboxErrorCodes.EvaluatorError, component, `refused the input: ${reason}`);
  }
}

/** The artifact's bytes do not have the pinned sha256; nothing of it ran. */
export class SandboxArtifactMismatchError extends SandboxError {
  constructor(
    readonly path: string,
    readonly expected: string,
    actual: string,
  ) {
    super(
      SandboxErrorCodes.ArtifactMismatch,
      actual,
      `${path} has sha256 ${actual}, but ${expected} was pinned; the artifact drifted and is refused`,
    );
  }
}

/** The component does not keep the contract (a `wasi:*` or other foreign import, a missing export, another contract hash). */
export class SandboxContractError extends SandboxError {
  constructor(
    component: string,
    readonly path: string,
    readonly violations: readonly string[],
  ) {
    super(SandboxErrorCodes.ContractViolation, component, `${path} is refused: ${violations.join('; ')}`);
  }
}

/** `buildComponent` could not build the source; `cause` holds the builder's error. */
export class SandboxBuildError extends SkeinError {
  constructor(
    readonly source: string,
    options?: { cause?: unknown },
  ) {
    const detail = options?.cause instanceof Error ? `: ${options.cause.message}` : '';
    super(SandboxErrorCodes.BuildFailed, `could not build ${source}${detail}`, options);
  }
}

/** The pool was closed; the invocation did not run (or was cut off). Retryable: another pool may run it. */
export class SandboxPoolClosedError extends SkeinError {
  constructor() {
    super(SandboxErrorCodes.PoolClosed, 'the sandbox pool is closed');
  }
}

/** The error instance for a failure reported by a worker thread. */
export function sandboxErrorFrom(component: string, data: SandboxErrorData): SandboxError {
  switch (data.code) {
    case SandboxErrorCodes.FuelExhausted:
      return new SandboxFuelExhaustedError(component, data.fuel);
    case SandboxErrorCodes.MemoryLimit:
      return new SandboxMemoryLimitError(component, data.limit, data.value);
    case SandboxErrorCodes.LogLimit:
      return new SandboxLogLimitError(component, data.limit, data.value);
    case SandboxErrorCodes.Trap:
      return new SandboxTrapError(component, data.reason);
    case SandboxErrorCodes.EvaluatorError:
      return new SandboxEvaluatorError(component, data.reason);
  }
}

/**
 * The sandbox's error classes, to register with `createRuntime({ errors })`: a recorded
 * sandbox failure then comes back (live and on replay) as its own class, so
 * `cause instanceof SandboxFuelExhaustedError` holds in a workflow body. Unregistered, it comes
 * back as its nearest known ancestor, `NonRetryableError`, with its `code` and fields.
 */
export const SandboxErrorClasses: readonly ErrorClass[] = [
  SandboxError,
  SandboxFuelExhaustedError,
  SandboxMemoryLimitError,
  SandboxTimeoutError,
  SandboxLogLimitError,
  SandboxTrapError,
  SandboxEvaluatorError,
  SandboxArtifactMismatchError,
  SandboxContractError,
  SandboxBuildError,
  SandboxPoolClosedError,
];
