/**
 * The worker's runs in progress, by execution id, so a redispatch to this worker while the
 * execution still runs here joins the run instead of fencing it out (adr/0011): a lost
 * answer costs a wait, never a step run twice.
 */
import type { ExecutionPackage, ExecutionResult, WorkerLease } from '@skein/worker-runtime';
import { LocalWorkerRuntime } from '@skein/worker-runtime-local';
import type { Runtime } from '@skein/workflow-runtime';

interface Run {
  fence: number;
  workflow: string;
  result: Promise<ExecutionResult>;
}

/** Allocates and executes on the worker's runtime, joining runs already in progress here. */
export class InFlightRuns {
  private readonly runs = new Map<string, Run>();
  private readonly local: LocalWorkerRuntime;

  constructor(private readonly runtime: Runtime) {
    this.local = new LocalWorkerRuntime({ runtime });
  }

  /** The fence of the run in progress here, or a new one (`LocalWorkerRuntime.allocate`). */
  allocate(pkg: ExecutionPackage): Promise<WorkerLease> {
    const run = this.joinable(pkg);
    if (run === undefined) return this.local.allocate(pkg);
    return Promise.resolve({
      executionId: pkg.executionId,
      fence: run.fence,
      workerId: this.runtime.nodeId,
      allocatedAt: Date.now(),
    });
  }

  /** Join the run in progress under the same fence, or execute under the lease's fence. */
  execute(lease: WorkerLease, pkg: ExecutionPackage): Promise<ExecutionResult> {
    const { executionId } = pkg;
    const current = this.joinable(pkg);
    if (current !== undefined && current.fence === lease.fence) return current.result;
    // `LocalWorkerRuntime.execute` may throw before it returns a promise: keep one promise.
    const result = (async () => this.local.execute(lease, pkg))();
    const run: Run = { fence: lease.fence, workflow: pkg.workflow, result };
    this.runs.set(executionId, run);
    const forget = () => {
      if (this.runs.get(executionId) === run) this.runs.delete(executionId);
    };
    run.result.then(forget, forget);
    return run.result;
  }

  /** The run in progress here that `pkg` may join: same execution, same workflow, not a start-only retry. */
  private joinable(pkg: ExecutionPackage): Run | undefined {
    if (pkg.startOnly === true) return undefined;
    const run = this.runs.get(pkg.executionId);
    return run?.workflow === pkg.workflow ? run : undefined;
  }

  /** Runs in progress here. */
  get size(): number {
    return this.runs.size;
  }

  /** Settle once every run in progress has settled. */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.runs.values()].map((run) => run.result));
  }
}
