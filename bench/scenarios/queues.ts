/**
 * Queues on PostgreSQL (issue 21, docs/queues.md): enqueue-to-done throughput of 3-step
 * workflows through a queue with a concurrency limit, run by 1 and by 2 Skein node processes
 * (a Supervisor each), against DBOS's `WorkflowQueue` with the same limit, in the same run and
 * in interleaved rounds (each round runs every engine once; the rows are medians over rounds).
 * The bench process enqueues (20 at a time) and waits for every result. Also the statements a
 * queued execution costs, counted in one process (enqueue, claim, run, release), beside an
 * `enqueue` with no queue.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { DBOS } from '@dbos-inc/dbos-sdk';
import { openPostgresStores } from '@skein/store-postgres';
import { Supervisor } from '@skein/worker-runtime-local';
import { createRuntime } from '@skein/workflow-runtime';
import pg from 'pg';
import { countPgStatements, pgStatementsSent } from '../counting/pg-statements.js';
import { expectResult } from '../engines/engine.js';
import { createDatabase, dropDatabase } from '../engines/pg-admin.js';
import { median, nowMs, throughput } from '../measure.js';
import type { Row } from '../report.js';
import { PG_URL } from './postgres-core.js';
import { benchQueue, QUEUE_CONCURRENCY, queueWorkflow } from './queue-shared.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const nodeScript = fileURLToPath(new URL('./queue-node.ts', import.meta.url));

/** Sizes of the queue bench. */
export interface QueueSizes {
  /** Executions per engine per round. */
  executions: number;
  rounds: number;
}

export const queueFullSizes: QueueSizes = { executions: 1_000, rounds: 3 };
export const queueSmokeSizes: QueueSizes = { executions: 30, rounds: 1 };

/** DBOS's default queue polling interval, in ms (its `minPollingIntervalMs`). */
const DBOS_DEFAULT_POLL_MS = 1_000;

interface NodeProcess {
  child: ChildProcess;
  ready: Promise<void>;
}

function spawnNode(schema: string): NodeProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', nodeScript, PG_URL, schema], {
    cwd: root,
    // The bench's mode (src or dist, bench/main.mjs) carries over through TSX_TSCONFIG_PATH.
    env: { TSX_TSCONFIG_PATH: `${root}tsconfig.json`, ...process.env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const ready = new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line === 'ready') resolve();
    });
    child.once('exit', (code) => reject(new Error(`bench: queue node exited with ${code}`)));
  });
  ready.catch(() => undefined);
  return { child, ready };
}

async function stopNode(node: NodeProcess): Promise<void> {
  if (node.child.exitCode !== null) return;
  const gone = new Promise((resolve) => node.child.once('exit', resolve));
  node.child.stdin!.end();
  await gone;
}

async function withSql<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * Skein: `nodes` node processes on a fresh schema; this process enqueues `count` executions
 * into the queue and waits for every result. Returns executions per second, first enqueue to
 * last result.
 */
async function skeinRound(nodes: number, count: number, round: number): Promise<number> {
  const schema = `bench_queues_${process.pid}_${round}_${nodes}`;
  const stores = await openPostgresStores({ url: PG_URL, schema, poolSize: 10 });
  // Enqueues only: its maintenance would run the work it finds (adr/0042).
  const client = createRuntime({
    stores,
    workflows: [queueWorkflow],
    queues: [benchQueue],
    maintenance: false,
  });
  const started = Array.from({ length: nodes }, () => spawnNode(schema));
  try {
    await Promise.all(started.map((node) => node.ready));
    const start = nowMs();
    const handles: Promise<unknown>[] = [];
    await throughput(count, 20, async (i) => {
      const handle = await client.enqueue(
        queueWorkflow,
        { n: i },
        { queue: benchQueue, executionId: `q-${i}` },
      );
      handles.push(
        handle.result().then((output) => expectResult(`skein ${nodes} node(s)`, i, output, i + 3)),
      );
    });
    await Promise.all(handles);
    return count / ((nowMs() - start) / 1000);
  } finally {
    await Promise.all(started.map(stopNode));
    await client.close();
    await stores.close();
    await withSql((sql) => sql.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
  }
}

function dbosWorkflow() {
  return DBOS.registerWorkflow(
    async (n: number) => {
      let total = n;
      for (let i = 0; i < 3; i++) {
        const before = total;
        total = await DBOS.runStep(async () => before + 1, { name: `s${i}` });
      }
      return total;
    },
    { name: 'bench-queue-steps-3' },
  );
}

/** DBOS, launched once on its own database for every round; `pollMs` is its queue's polling interval. */
async function openDbos(pollMs: number) {
  const name = `bench_dbos_queues_${process.pid}`;
  const url = await createDatabase(name);
  const workflow = dbosWorkflow();
  DBOS.setConfig({ name: 'skein-bench-queues', systemDatabaseUrl: url, logLevel: 'error' });
  await DBOS.launch();
  await DBOS.registerQueue('bench', { globalConcurrency: QUEUE_CONCURRENCY, minPollingIntervalMs: pollMs });
  return {
    async round(count: number, round: number): Promise<number> {
      const start = nowMs();
      const handles: Promise<unknown>[] = [];
      await throughput(count, 20, async (i) => {
        const handle = await DBOS.startWorkflow(workflow, {
          workflowID: `r${round}-${i}`,
          queueName: 'bench',
        })(i);
        handles.push(handle.getResult().then((output) => expectResult('dbos queue', i, output, i + 3)));
      });
      await Promise.all(handles);
      return count / ((nowMs() - start) / 1000);
    },
    async close() {
      await DBOS.shutdown({ deregister: true });
      await dropDatabase(name);
    },
  };
}

/**
 * Statements this process sends per execution: `count` executions enqueued (into the queue, or
 * with no queue), then run by an in-process Supervisor until every one completed.
 */
async function statementsPerExecution(count: number, queued: boolean): Promise<number> {
  countPgStatements();
  const schema = `bench_queue_counts_${process.pid}_${queued ? 'q' : 'plain'}`;
  const stores = await openPostgresStores({ url: PG_URL, schema, poolSize: 10 });
  const runtime = createRuntime({
    stores,
    workflows: [queueWorkflow],
    queues: [benchQueue],
    lease: { ttlMs: 30_000 },
  });
  const supervisor = new Supervisor({
    runtime,
    stores,
    tickIntervalMs: 1_000,
    concurrency: 50,
    wakeups: stores.wakeups,
  });
  const database = new URL(PG_URL).pathname.slice(1);
  try {
    const before = pgStatementsSent(database);
    const handles = [];
    for (let i = 0; i < count; i++)
      handles.push(
        await runtime.enqueue(
          queueWorkflow,
          { n: i },
          queued ? { queue: benchQueue, executionId: `s-${i}` } : { executionId: `s-${i}` },
        ),
      );
    supervisor.start();
    for (const handle of handles) await handle.result();
    return (pgStatementsSent(database) - before) / count;
  } finally {
    await supervisor.stop();
    await runtime.close();
    await stores.close();
    await withSql((sql) => sql.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
  }
}

/** The queue rows; see the file comment. */
export async function queues(sizes: QueueSizes): Promise<Row[]> {
  const one: number[] = [];
  const two: number[] = [];
  const peer: number[] = [];
  const dbos = await openDbos(DBOS_DEFAULT_POLL_MS);
  try {
    for (let round = 0; round < sizes.rounds; round++) {
      one.push(await skeinRound(1, sizes.executions, round));
      two.push(await skeinRound(2, sizes.executions, round));
      peer.push(await dbos.round(sizes.executions, round));
    }
  } finally {
    await dbos.close();
  }
  const plain = await statementsPerExecution(sizes.executions, false);
  const inQueue = await statementsPerExecution(sizes.executions, true);
  const baseline = { name: 'DBOS WorkflowQueue', value: median(peer) };
  const what = `${sizes.executions} 3-step workflows, queue concurrency ${QUEUE_CONCURRENCY}`;
  return [
    {
      metric: `DBOS WorkflowQueue (polling ${DBOS_DEFAULT_POLL_MS} ms, its default), ${what}`,
      value: median(peer),
      unit: 'wf/s',
    },
    {
      metric: `Skein queue, 1 node process, ${what}`,
      value: median(one),
      unit: 'wf/s',
      baseline,
      target: '>= 5x DBOS',
      met: median(one) >= 5 * median(peer),
    },
    {
      metric: `Skein queue, 2 node processes, ${what}`,
      value: median(two),
      unit: 'wf/s',
      baseline,
      target: '>= 5x DBOS',
      met: median(two) >= 5 * median(peer),
    },
    {
      metric: `statements per queued execution (enqueue to done, one process), ${sizes.executions} 3-step workflows`,
      value: inQueue,
      unit: 'statements',
      baseline: { name: 'enqueue with no queue', value: plain },
    },
  ];
}
