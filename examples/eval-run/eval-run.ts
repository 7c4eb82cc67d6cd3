/**
 * The eval run as a function: a SQLite file, `workers` worker processes, the `eval-run`
 * workflow over `size` cases, progress while it runs, and what it came to.
 */
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { openSqliteStores } from '@skein/store-sqlite';
import { createRuntime, type FanOutSummary } from '@skein/workflow-runtime';
import { exited, spawnScript } from './spawn.js';
import { evalRun, type Totals } from './workflow.js';

/** What the run came to. */
export interface EvalReport {
  summary: FanOutSummary<Totals>;
  /** Results each worker persisted, by worker id. */
  byWorker: Record<string, number>;
  /** Events in the workflow's own log. */
  logLength: number;
}

function ready(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', () => resolve());
    child.once('exit', (code) => reject(new Error(`a worker exited (${code}) before it was ready`)));
  });
}

/** Run it; `progress` hears the succeeded count as it grows. */
export async function runEvalRun(
  dir: string,
  size: number,
  workers = 3,
  progress: (succeeded: number, total: number) => void = () => {},
): Promise<EvalReport> {
  const path = join(dir, 'eval.db');
  const stores = openSqliteStores({ path });
  const runtime = createRuntime({ stores, workflows: [evalRun] });
  const children = Array.from({ length: workers }, (_, i) =>
    spawnScript('./worker.ts', [path, `worker-${i + 1}`]),
  );
  const byWorker: Record<string, number> = {};
  try {
    await Promise.all(children.map(ready));
    const handle = await runtime.start(evalRun, { size }, { executionId: 'eval-1' });
    const ticker = setInterval(() => {
      void stores.fanOuts.counts('eval-1:fanout:cases').then((c) => progress(c.items.succeeded, size));
    }, 250);
    const summary = await handle.result().finally(() => clearInterval(ticker));
    progress(summary.succeeded, size);
    const logLength = (await runtime.history('eval-1')).length;
    for (const [i, child] of children.entries()) {
      const stats = new Promise<string>((resolve) => {
        createInterface({ input: child.stdout! }).on('line', (line) => {
          if (line.startsWith('stats ')) resolve(line.slice(6));
        });
      });
      child.kill('SIGTERM');
      byWorker[`worker-${i + 1}`] = (JSON.parse(await stats) as { results: number }).results;
      await exited(child);
    }
    return { summary, byWorker, logLength };
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await runtime.close();
    await stores.close();
  }
}
