/**
 * Every error the `skein` command raises on its own, each with a stable `code` and the exit
 * code it ends the process with: 2 for usage (a flag or argument that is wrong), 1 for a
 * failure (a database that cannot be opened, an execution that does not exist).
 */
import { SkeinError } from '@skein/workflow-runtime';

/** Stable codes of the errors of this package, by class (without the `Error` suffix). */
export const CliErrorCodes = {
  Usage: 'CLI_USAGE',
  StoreUnavailable: 'CLI_STORE_UNAVAILABLE',
  WorkflowModule: 'CLI_WORKFLOW_MODULE',
} as const;

/** One of {@link CliErrorCodes}. */
export type CliErrorCode = (typeof CliErrorCodes)[keyof typeof CliErrorCodes];

/** Exit codes of `skein`: scripts may rely on them. */
export const ExitCodes = { ok: 0, failure: 1, usage: 2 } as const;

/** Base class of the CLI's errors; `exitCode` is what the process ends with. */
export class CliError extends SkeinError {
  constructor(
    code: CliErrorCode,
    message: string,
    readonly exitCode: 1 | 2,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
  }
}

/** A flag or argument that is wrong or missing; the message says how to call it instead. */
export class UsageError extends CliError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(CliErrorCodes.Usage, message, ExitCodes.usage, options);
  }
}

/** The store named by `--db` or `--pg` cannot be opened as a Skein store. */
export class StoreUnavailableError extends CliError {
  constructor(
    readonly target: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(CliErrorCodes.StoreUnavailable, `${target}: ${reason}`, ExitCodes.failure, options);
  }
}

/** The module given to `--workflows` could not be loaded or exports no workflow. */
export class WorkflowModuleError extends CliError {
  constructor(
    readonly path: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(CliErrorCodes.WorkflowModule, `--workflows ${path}: ${reason}`, ExitCodes.usage, options);
  }
}
