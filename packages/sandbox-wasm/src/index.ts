/**
 * @skein/sandbox-wasm: untrusted code as WebAssembly components. `buildComponent` builds a
 * JavaScript evaluator with jco's QuickJS backend, `loadComponent` loads it pinned by sha256 and
 * contract hash, and `SandboxPool` runs invocations in worker threads, a fresh instance each,
 * under memory, table, instance, fuel, time and log limits. See docs/sandbox.md.
 */
export { type BuildOptions, type BuiltComponent, buildComponent } from './build.js';
export { type LoadOptions, loadComponent, SandboxComponent } from './component.js';
export { evaluatorContract, type SandboxContract } from './contract.js';
export {
  type LogLimit,
  type ResourceLimit,
  SandboxArtifactMismatchError,
  SandboxBuildError,
  SandboxContractError,
  SandboxError,
  SandboxErrorClasses,
  type SandboxErrorCode,
  SandboxErrorCodes,
  type SandboxErrorData,
  SandboxEvaluatorError,
  SandboxFuelExhaustedError,
  SandboxLogLimitError,
  SandboxMemoryLimitError,
  SandboxPoolClosedError,
  SandboxTimeoutError,
  SandboxTrapError,
} from './errors.js';
export { DEFAULT_LIMITS, type SandboxLimits } from './limits.js';
export { SandboxPool, type SandboxPoolOptions, type SandboxRun } from './pool.js';
