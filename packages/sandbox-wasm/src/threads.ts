/** Starting the sandbox's worker threads, from the built package or (in this repository) from source. */
import { Worker } from 'node:worker_threads';
import type { WorkerMessage, WorkerRole } from './protocol.js';

const fromSource = import.meta.url.endsWith('.ts');
const entry = new URL(fromSource ? './worker.ts' : './worker.js', import.meta.url);

/** V8 heap of a sandbox thread: the glue's JavaScript; guest memory is counted apart (default: 128 MiB). */
const WORKER_HEAP_MB = 128;

/** Start a worker thread of `role`; it posts `ready` once it can take requests. */
export function startWorker(role: WorkerRole): Worker {
  const options = {
    workerData: { role },
    env: {},
    resourceLimits: role === 'sandbox' ? { maxOldGenerationSizeMb: WORKER_HEAP_MB } : undefined,
  };
  if (!fromSource) return new Worker(entry, options);
  // From TypeScript sources (this repository's tests and benchmarks, run from its root): register
  // tsx, a dev dependency of the workspace, in the thread, then load the entry.
  const boot = `import('tsx/esm/api').then((api) => { api.register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(boot, { ...options, eval: true });
}

/** Resolve once `worker` has posted `ready`; reject if it fails or exits first. */
export function ready(worker: Worker): Promise<void> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: WorkerMessage) => {
      if (message.type !== 'ready') return;
      cleanup();
      resolve();
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const onExit = (code: number) => {
      cleanup();
      reject(new Error(`a sandbox worker thread exited (code ${code}) before it was ready`));
    };
    const cleanup = () => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    };
    worker.on('message', onMessage);
    worker.once('error', onError);
    worker.once('exit', onExit);
  });
}
