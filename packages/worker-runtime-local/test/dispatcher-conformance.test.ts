import { dispatcherSuite } from '@skein/conformance';
import { LocalDispatcher, LocalWorkerRuntime, SupervisingDispatcher } from '@skein/worker-runtime-local';
import type { AnyWorkflow } from '@skein/workflow-runtime';
import { harness } from './support/sqlite.js';

const h = harness();

function local(workflows: readonly AnyWorkflow[]) {
  const db = h.db();
  const runtime = h.runtime({ stores: db.stores, workflows });
  const dispatcher = new LocalDispatcher({
    workers: new LocalWorkerRuntime({ runtime }),
    executeTimeoutMs: 5_000,
    maxAttempts: 3,
  });
  // The harness closes the runtime and the SQLite file after each test.
  return { dispatcher, runtime, close: () => undefined };
}

dispatcherSuite({ name: 'LocalDispatcher on SQLite', open: local });

dispatcherSuite({
  name: 'SupervisingDispatcher over LocalDispatcher on SQLite',
  open: (workflows) => {
    const inner = local(workflows);
    return { ...inner, dispatcher: new SupervisingDispatcher({ target: inner.dispatcher, maxRestarts: 2 }) };
  },
});
