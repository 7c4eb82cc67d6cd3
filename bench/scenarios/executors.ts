/**
 * Executors (issue #22): what a run costs through an `ExecutorHub` and an executor that retains
 * its result in its own SQLite file, next to the same run through the HTTP worker
 * (`createHttpWorker` + `RemoteWorkerRuntime`), in the same process and the same run, so the
 * ratio holds on a loaded host where the absolute numbers do not.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStores } from '@skein/store-sqlite';
import type { WorkerRuntime } from '@skein/worker-runtime';
import {
  createExecutor,
  createHttpWorker,
  ExecutorHub,
  RemoteWorkerRuntime,
} from '@skein/worker-runtime-http';
import { LocalDispatcher } from '@skein/worker-runtime-local';
import { createRuntime, defineWorkflow } from '@skein/workflow-runtime';
import { z } from 'zod';
import { median, percentile, sequential, throughput } from '../measure.js';
import type { Row } from '../report.js';

/** Counts of the scenario's loops. */
export interface ExecutorSizes {
  /** Dispatches timed one after another, per path. */
  sequential: number;
  /** Dispatches in the throughput run, per path. */
  concurrent: number;
}

export const executorFullSizes: ExecutorSizes = { sequential: 200, concurrent: 400 };
export const executorSmokeSizes: ExecutorSizes = { sequential: 5, concurrent: 10 };

const SECRET = 'a bench secret of at least thirty-two bytes';
const CONCURRENCY = 16;
const render = defineWorkflow({
  name: 'render',
  input: z.object({ frame: z.number().int() }),
  run: async (ctx, { frame }) => ctx.step('draw', () => `frame-${frame}`),
});
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

interface Path {
  workers: WorkerRuntime;
  close(): Promise<void>;
}

async function hubPath(dir: string): Promise<Path> {
  const stores = openSqliteStores({ path: join(dir, 'central.db'), durability: 'normal' });
  const runtime = createRuntime({ stores, workflows: [render] });
  const hub = new ExecutorHub({ runtime, secret: SECRET, logger: quiet });
  const url = await hub.listen(0, '127.0.0.1');
  const executor = createExecutor({
    id: 'bench',
    hub: url,
    secret: SECRET,
    stateDir: join(dir, 'exec'),
    workflows: [render],
    packageVersion: '1',
    logger: quiet,
  });
  await executor.start();
  return {
    workers: hub,
    close: async () => {
      await executor.stop();
      await hub.close();
      await runtime.close();
      await stores.close();
    },
  };
}

async function workerPath(dir: string): Promise<Path> {
  const stores = openSqliteStores({ path: join(dir, 'worker.db'), durability: 'normal' });
  const runtime = createRuntime({ stores, workflows: [render] });
  const worker = createHttpWorker({ runtime, secret: SECRET, logger: quiet });
  const url = await worker.listen(0, '127.0.0.1');
  return {
    workers: new RemoteWorkerRuntime({ url, secret: SECRET }),
    close: async () => {
      await worker.close();
      await runtime.close();
      await stores.close();
    },
  };
}

async function measure(path: Path, prefix: string, sizes: ExecutorSizes) {
  const dispatcher = new LocalDispatcher({ workers: path.workers, executeTimeoutMs: 30_000 });
  const run = (id: string, frame: number) =>
    dispatcher.dispatch({ executionId: id, workflow: 'render', input: { frame } });
  await sequential(5, (i) => run(`${prefix}-warm-${i}`, i));
  const latencies = await sequential(sizes.sequential, (i) => run(`${prefix}-seq-${i}`, i));
  const perSecond = await throughput(sizes.concurrent, CONCURRENCY, (i) => run(`${prefix}-par-${i}`, i));
  return { latencies, perSecond };
}

/** Run the executor measurements; return the table rows. */
export async function executors(sizes: ExecutorSizes): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'skein-bench-executors-'));
  try {
    const worker = await workerPath(dir);
    const viaWorker = await measure(worker, 'w', sizes).finally(() => worker.close());
    const hub = await hubPath(dir);
    const viaHub = await measure(hub, 'h', sizes).finally(() => hub.close());
    const workerP50 = median(viaWorker.latencies);
    return [
      {
        metric: 'dispatch through hub + executor, p50 (retained, then reported)',
        value: median(viaHub.latencies),
        unit: 'ms',
        baseline: { name: 'HTTP worker p50', value: workerP50 },
      },
      { metric: 'dispatch through hub + executor, p99', value: percentile(viaHub.latencies, 99), unit: 'ms' },
      { metric: 'dispatch through the HTTP worker, p50', value: workerP50, unit: 'ms' },
      {
        metric: `dispatches/s through hub + executor (${CONCURRENCY} at once)`,
        value: viaHub.perSecond,
        unit: '/s',
        baseline: { name: 'HTTP worker', value: viaWorker.perSecond },
      },
      {
        metric: `dispatches/s through the HTTP worker (${CONCURRENCY} at once)`,
        value: viaWorker.perSecond,
        unit: '/s',
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
