/** Dispatch with deadlines and redispatch (docs/architecture.md#dispatch). */
import {
  DispatchFailedError,
  DispatchTimeoutError,
  type ExecutionDispatcher,
  type ExecutionPackage,
  type ExecutionResult,
  ExecutionSupersededError,
  isSupersededRefusal,
  type WorkerRuntime,
} from '@skein/worker-runtime';
import { z } from 'zod';
import { parseOptions, parsePackage } from './package-schema.js';

/** Options of {@link LocalDispatcher}. */
export interface LocalDispatcherOptions {
  /** Where attempts run (a `LocalWorkerRuntime`, a `RemoteWorkerRuntime`, ...). */
  workers: WorkerRuntime;
  /** Deadline of one attempt in ms; past it the attempt has failed (no default: required). */
  executeTimeoutMs: number;
  /** Attempts per dispatch, the first included (default: 1). */
  maxAttempts?: number;
  /**
   * Where late failures of abandoned attempts go, other than the expected superseded refusal
   * (default: `console.error`).
   */
  onError?: (error: unknown, context: string) => void;
}

const optionsSchema = z.object({
  workers: z.custom<WorkerRuntime>(
    (value) => typeof value === 'object' && value !== null && 'allocate' in value && 'execute' in value,
    'must be a WorkerRuntime',
  ),
  executeTimeoutMs: z.number().int().positive(),
  maxAttempts: z.number().int().positive().optional(),
  onError: z.custom<(error: unknown, context: string) => void>((v) => typeof v === 'function').optional(),
});

/**
 * Dispatches an execution to workers: an attempt that throws or passes its deadline has
 * failed and is dispatched again (with a new fence) while attempts remain. A workflow that
 * ends `failed` is an outcome, returned. A superseded refusal is never retried: it becomes
 * `ExecutionSupersededError`. A start fenced out (`StartFencedOutError`) is retried as a
 * start only, so an execution another holder started meanwhile is left to it.
 * @example
 * const dispatcher = new LocalDispatcher({ workers, executeTimeoutMs: 30_000, maxAttempts: 3 });
 * const state = await dispatcher.dispatch({ executionId: 'order-42', workflow: 'order', input });
 */
export class LocalDispatcher implements ExecutionDispatcher {
  private readonly workers: WorkerRuntime;
  private readonly executeTimeoutMs: number;
  private readonly maxAttempts: number;
  private readonly onError: (error: unknown, context: string) => void;

  constructor(options: LocalDispatcherOptions) {
    const parsed = parseOptions(optionsSchema, options, 'LocalDispatcher options');
    this.workers = parsed.workers;
    this.executeTimeoutMs = parsed.executeTimeoutMs;
    this.maxAttempts = parsed.maxAttempts ?? 1;
    this.onError = parsed.onError ?? ((error, context) => console.error(`skein: ${context}:`, error));
  }

  /** Run the execution to a terminal or suspended state; see the class comment. */
  async dispatch(pkg: ExecutionPackage): Promise<ExecutionResult> {
    const parsed = parsePackage(pkg, 'dispatch package');
    const { executionId } = parsed;
    let startOnly = parsed.startOnly ?? false;
    let last: unknown;
    for (let attempt = 1; attempt <= this.maxAttempts; attempt++) {
      try {
        return await this.attempt({ ...parsed, startOnly }, attempt);
      } catch (error) {
        if (isSupersededRefusal(error, executionId)) throw superseded(error, executionId);
        // The start never happened; whoever fenced it out may start it, and then owns it.
        if (error instanceof Error && error.name === 'StartFencedOutError') startOnly = true;
        last = error;
      }
    }
    throw new DispatchFailedError(executionId, this.maxAttempts, { cause: last });
  }

  private async attempt(pkg: ExecutionPackage, attempt: number): Promise<ExecutionResult> {
    const lease = await this.workers.allocate(pkg);
    let timer: ReturnType<typeof setTimeout> | undefined;
    let running: Promise<ExecutionResult> = Promise.resolve() as never;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new DispatchTimeoutError(pkg.executionId, this.executeTimeoutMs, attempt)),
        this.executeTimeoutMs,
      );
    });
    try {
      running = (async () => this.workers.execute(lease, pkg))();
      return await Promise.race([running, deadline]);
    } catch (error) {
      if (error instanceof DispatchTimeoutError) this.watchAbandoned(running, pkg.executionId, attempt);
      throw error;
    } finally {
      clearTimeout(timer);
      await this.release(lease, pkg.executionId);
    }
  }

  /** An attempt past its deadline runs on until a newer fence stops it; report only the unexpected. */
  private watchAbandoned(running: Promise<unknown>, executionId: string, attempt: number): void {
    running.catch((error: unknown) => {
      if (!isSupersededRefusal(error, executionId)) {
        this.onError(error, `abandoned attempt ${attempt} of execution "${executionId}"`);
      }
    });
  }

  private async release(lease: Parameters<WorkerRuntime['release']>[0], executionId: string): Promise<void> {
    try {
      await this.workers.release(lease);
    } catch (error) {
      this.onError(error, `release of the worker lease of execution "${executionId}"`);
    }
  }
}

function superseded(error: unknown, executionId: string): ExecutionSupersededError {
  return error instanceof ExecutionSupersededError
    ? error
    : new ExecutionSupersededError(executionId, { cause: error });
}
