/**
 * @skein/cli: the `skein` command (list, show, history, recover, dead-letters, cancel, resume, signal,
 * ui) over a SQLite file or a PostgreSQL schema, and the web inspector it serves.
 */
export {
  CliError,
  type CliErrorCode,
  CliErrorCodes,
  ExitCodes,
  StoreUnavailableError,
  UsageError,
  WorkflowModuleError,
} from './errors.js';
export { type DeadLetter, deadLetters, type ExecutionDetail, executionDetail, listPage } from './inspect.js';
export type { Io } from './output.js';
export { type RunCliOptions, runCli } from './program.js';
export { openTarget, type Target, type TargetOptions } from './target.js';
export { type Attempt, buildTimeline, type Takeover, type Timeline, type TimelineCall } from './timeline.js';
export {
  createInspector,
  type InspectorOptions,
  type RunningInspector,
  startInspector,
} from './ui/server.js';
