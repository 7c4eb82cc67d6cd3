/** `workerRuntimeSuite` on LocalWorkerRuntime and RemoteWorkerRuntime, and `dispatcherSuite` over HTTP, on SQLite. */
import { dispatcherSuite, workerRuntimeSuite } from '@skein/conformance';
import { LocalDispatcher, LocalWorkerRuntime, SupervisingDispatcher } from '@skein/worker-runtime-local';
import { workers } from './support/worker.js';

// Every worker, runtime and SQLite file opened here is closed by the support after each test.
const w = workers();

workerRuntimeSuite({
  name: 'LocalWorkerRuntime on SQLite',
  open: async (workflows) => {
    const { runtime } = await w.serve([...workflows]);
    return { workers: new LocalWorkerRuntime({ runtime }), runtime, close: () => undefined };
  },
});

workerRuntimeSuite({
  name: 'RemoteWorkerRuntime over 127.0.0.1 on SQLite',
  open: async (workflows) => {
    const served = await w.serve([...workflows]);
    return { workers: served.client(), runtime: served.runtime, close: () => undefined };
  },
});

dispatcherSuite({
  name: 'SupervisingDispatcher over LocalDispatcher over RemoteWorkerRuntime',
  open: async (workflows) => {
    const served = await w.serve([...workflows]);
    const target = new LocalDispatcher({ workers: served.client(), executeTimeoutMs: 5_000, maxAttempts: 3 });
    const dispatcher = new SupervisingDispatcher({ target, maxRestarts: 2 });
    return { dispatcher, runtime: served.runtime, close: () => undefined };
  },
});
