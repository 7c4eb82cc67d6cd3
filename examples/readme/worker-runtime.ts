// examples/readme/worker-runtime.ts: a dispatcher of your own over the WorkerRuntime SPI
import {
  type ExecutionDispatcher,
  type ExecutionPackage,
  type ExecutionResult,
  ExecutionSupersededError,
  isSupersededRefusal,
  type WorkerRuntime,
} from '@skein/worker-runtime';

/** One attempt per dispatch: allocate a fence, execute under it, release. */
export class OneShotDispatcher implements ExecutionDispatcher {
  constructor(private readonly workers: WorkerRuntime) {}

  async dispatch(pkg: ExecutionPackage): Promise<ExecutionResult> {
    const lease = await this.workers.allocate(pkg);
    try {
      return await this.workers.execute(lease, pkg);
    } catch (error) {
      // Another holder owns the execution: never retry it; the caller awaits the outcome by id.
      if (isSupersededRefusal(error, pkg.executionId))
        throw new ExecutionSupersededError(pkg.executionId, { cause: error });
      throw error;
    } finally {
      await this.workers.release(lease);
    }
  }
}
