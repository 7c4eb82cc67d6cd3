/**
 * The dispatcher side of the demo: spawn the worker process, wait for its URL, dispatch a
 * few executions to it over signed HTTP, dispatch one again (it is returned, not re-run),
 * and shut the worker down.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RemoteWorkerRuntime } from '@skein/worker-runtime-http';
import { LocalDispatcher } from '@skein/worker-runtime-local';
import type { ExecutionState } from '@skein/workflow-runtime';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** What the demo did. */
export interface RemoteDemoReport {
  url: string;
  workerPid: number;
  results: ExecutionState[];
  again: ExecutionState;
  workerExit: { code: number | null; signal: NodeJS.Signals | null };
}

const ORDERS = [
  { executionId: 'quote-apple', input: { sku: 'apple', qty: 3 } },
  { executionId: 'quote-pear', input: { sku: 'pear', qty: 1 } },
  { executionId: 'quote-plum', input: { sku: 'plum', qty: 10 } },
];

/** Run the demo with its SQLite file in `dir`; `print` gets each line of output. */
export async function runRemoteDemo(
  dir: string,
  print: (line: string) => void = console.log,
): Promise<RemoteDemoReport> {
  const secret = randomBytes(32).toString('hex');
  const worker = spawnWorker(join(dir, 'skein.db'), secret);
  const exit = exited(worker);
  try {
    const url = await listening(worker, 30_000);
    print(`worker ${worker.pid} listening on ${url}`);
    const workers = new RemoteWorkerRuntime({ url, secret, timeoutMs: 10_000 });
    const dispatcher = new LocalDispatcher({ workers, executeTimeoutMs: 10_000, maxAttempts: 3 });
    const results = await Promise.all(
      ORDERS.map(({ executionId, input }) => dispatcher.dispatch({ executionId, workflow: 'quote', input })),
    );
    for (const state of results)
      print(`${state.executionId}: ${state.status} ${JSON.stringify(state.output)}`);
    const again = await dispatcher.dispatch({ executionId: ORDERS[0]!.executionId, workflow: 'quote' });
    print(`${again.executionId} dispatched again: ${again.status}, still ${again.sequence + 1} events`);
    worker.kill('SIGTERM');
    const workerExit = await exit;
    print(`worker exited with code ${workerExit.code}`);
    return { url, workerPid: worker.pid ?? -1, results, again, workerExit };
  } finally {
    if (worker.exitCode === null && worker.signalCode === null) worker.kill('SIGKILL');
  }
}

function spawnWorker(dbPath: string, secret: string): ChildProcess {
  return spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL('./worker.ts', import.meta.url)), dbPath],
    {
      cwd: root,
      env: { ...process.env, SKEIN_SECRET: secret, TSX_TSCONFIG_PATH: `${root}tsconfig.json` },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
}

/** The URL the worker prints once it listens. */
function listening(child: ChildProcess, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(
      () => reject(new Error(`worker did not listen within ${timeoutMs} ms`)),
      timeoutMs,
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const match = /listening (\S+)/.exec(text);
      if (match !== null) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited with code ${code} before listening`));
    });
  });
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}
