/** Starting the sandbox's worker threads, from the built package or (in this repository) from source. */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { WorkerMessage, WorkerRole } from './protocol.js';

/**
 * From TypeScript sources (this repository's tests and benchmarks) the worker entry is bundled
 * once with esbuild into `.skein-tmp/`, beside the package's node_modules. A TypeScript loader in
 * the threads instead would also run over binaryen's 14 MB of JavaScript: 12 s instead of 0.5 s.
 */
async function entryFromSource(): Promise<URL> {
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: [fileURLToPath(new URL('./worker.ts', import.meta.url))],
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    write: false,
  });
  const code = result.outputFiles[0]!.text;
  const dir = fileURLToPath(new URL('../.skein-tmp/', import.meta.url));
  const path = `${dir}worker-${createHash('sha256').update(code).digest('hex').slice(0, 16)}.mjs`;
  if (!existsSync(path)) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${path}.${process.pid}`, code);
    renameSync(`${path}.${process.pid}`, path); // atomic: processes bundling at once each see a whole file
  }
  return pathToFileURL(path);
}

const entry = import.meta.url.endsWith('.ts')
  ? await entryFromSource()
  : new URL('./worker.js', import.meta.url);

/** V8 heap of a sandbox thread: the glue's JavaScript; guest memory is counted apart (default: 128 MiB). */
const WORKER_HEAP_MB = 128;

/** Start a worker thread of `role`; it posts `ready` once it can take requests. */
export function startWorker(role: WorkerRole): Worker {
  const options = {
    workerData: { role },
    env: {},
    resourceLimits: role === 'sandbox' ? { maxOldGenerationSizeMb: WORKER_HEAP_MB } : undefined,
  };
  return new Worker(entry, options);
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
