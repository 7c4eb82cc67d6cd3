/** The in-process {@link WorkerRuntime}: executions run on a `Runtime` in this process. */
import type { ExecutionPackage, ExecutionResult, WorkerLease, WorkerRuntime } from '@skein/worker-runtime';
import type { Runtime } from '@skein/workflow-runtime';
import { LeaseMismatchError } from './errors.js';
import { parsePackage } from './package-schema.js';

/** Options of {@link LocalWorkerRuntime}. */
export interface LocalWorkerRuntimeOptions {
  /** The runtime that executes; its stores hand out the fences. */
  runtime: Runtime;
}

/**
 * Runs executions on a runtime in this process. Every attempt gets a new fence
 * (`allocate` calls `stores.events.acquireFence`), so a later attempt fences out an earlier
 * one that is still running (a hung worker past its deadline); only a start-only retry
 * reuses the current one.
 * @example
 * const workers = new LocalWorkerRuntime({ runtime });
 * const dispatcher = new LocalDispatcher({ workers, executeTimeoutMs: 30_000, maxAttempts: 3 });
 */
export class LocalWorkerRuntime implements WorkerRuntime {
  private readonly runtime: Runtime;

  constructor(options: LocalWorkerRuntimeOptions) {
    this.runtime = options.runtime;
  }

  /**
   * Take a new fence for this attempt. A start-only attempt (the retry of a start that was
   * fenced out) takes the current fence instead: seq 0 alone decides a race of starts, and a
   * new fence would fence out the holder that just won it (ping-pong, adr/0007).
   */
  async allocate(pkg: ExecutionPackage): Promise<WorkerLease> {
    const { executionId, startOnly } = parsePackage(pkg, 'allocate package');
    const { events } = this.runtime.stores;
    const fence =
      startOnly === true ? await events.currentFence(executionId) : await events.acquireFence(executionId);
    return { executionId, fence, workerId: this.runtime.nodeId, allocatedAt: Date.now() };
  }

  /** `runtime.execute` under the lease's fence: bootstrap with it, or take over with it. */
  async execute(lease: WorkerLease, pkg: ExecutionPackage): Promise<ExecutionResult> {
    const { executionId, workflow, input, version, startOnly } = parsePackage(pkg, 'execute package');
    if (lease.executionId !== executionId) throw new LeaseMismatchError(executionId, lease.executionId);
    return this.runtime.execute(
      { executionId, workflow, input, ...(version === undefined ? {} : { version }) },
      { fence: lease.fence, startOnly: startOnly ?? false },
    );
  }

  /** Nothing to give back: a fence needs no release, and a newer attempt's fence supersedes it. */
  async release(_lease: WorkerLease): Promise<void> {}
}
