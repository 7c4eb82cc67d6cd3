/** The in-process {@link WorkerRuntime}: executions run on a `Runtime` in this process. */
import type { ExecutionPackage, ExecutionResult, WorkerLease, WorkerRuntime } from '@skein/worker-runtime';
import { ExecutionAlreadyExistsError, type Runtime } from '@skein/workflow-runtime';
import { parseWith } from '@skein/workflow-runtime/internal';
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
   * new fence would fence out the holder that just won it (ping-pong, adr/0007). A package
   * that could not run is refused first, with no fence taken (see `assertRunnable`).
   */
  async allocate(pkg: ExecutionPackage): Promise<WorkerLease> {
    const parsed = parsePackage(pkg, 'allocate package');
    await this.assertRunnable(parsed);
    const { executionId, startOnly } = parsed;
    const { events } = this.runtime.stores;
    const fence =
      startOnly === true ? await events.currentFence(executionId) : await events.acquireFence(executionId);
    return { executionId, fence, workerId: this.runtime.nodeId, allocatedAt: Date.now() };
  }

  /**
   * Refuse, before a fence is taken, a package that no `execute` could run: a fence for it
   * would leave a head row with no seq 0, or fence out the execution's holder for nothing.
   * The workflow must be registered (`UnknownWorkflowError`), and either its input must pass
   * the workflow's schema (the package can start the execution) or the execution must exist,
   * of that workflow (else `InvalidInputError` naming the input, or
   * `ExecutionAlreadyExistsError`). An input that passes costs no read.
   */
  private async assertRunnable(pkg: ExecutionPackage): Promise<void> {
    const definition = this.runtime.workflow(pkg.workflow, pkg.version);
    if (definition.input.safeParse(pkg.input).success) return;
    const existing = await this.runtime.stores.events.getExecution(pkg.executionId);
    if (existing === null) {
      parseWith(definition.input, pkg.input, `input of workflow "${definition.name}"`, 'input');
    } else if (existing.workflow !== pkg.workflow) {
      throw new ExecutionAlreadyExistsError(pkg.executionId, existing.workflow);
    }
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
