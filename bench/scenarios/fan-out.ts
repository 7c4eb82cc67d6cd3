/**
 * Fan-out throughput (issue #18): items/s end to end (creation, dispatch, every chunk worked,
 * settled) for a trivial task, chunk size 100, with 1, 2 and 4 worker processes, on SQLite with
 * a StoreTransport and on PostgreSQL with RabbitMQ; against the same work as one execution
 * per item in Skein (SQLite, and PostgreSQL), one child workflow per item (a parent awaiting
 * its children, PostgreSQL) and one workflow per item in DBOS, in the same run, in interleaved
 * rounds (medians); and the peak RSS of a process that only creates a fan-out (its own process,
 * plain `node`, the built packages), for a small and a large plan, on SQLite and PostgreSQL.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { AmqpTransport } from '@skein/broker-amqp';
import { openPostgresStores } from '@skein/store-postgres';
import { openSqliteStores } from '@skein/store-sqlite';
import { OutboxPublisher } from '@skein/worker-runtime-local';
import { createRuntime, type FanOutStore } from '@skein/workflow-runtime';
import { createFanOut, fanOutSettled } from '@skein/workflow-runtime/internal';
import { chunkReadyTopic, type FanOutPlan } from '@skein/workflow-runtime/spi';
import pg from 'pg';
import { dbos } from '../engines/dbos.js';
import type { EngineSpec } from '../engines/engine.js';
import { withEngine, withTarget } from '../engines/lifecycle.js';
import { skeinPostgres } from '../engines/skein-postgres.js';
import { median, nowMs, throughput } from '../measure.js';
import type { Row } from '../report.js';
import { perItem, perItemParent, trivial } from './fan-out-task.js';
import { PG_URL } from './postgres-core.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const AMQP_URL = process.env.SKEIN_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

/** Counts of the scenario. */
export interface FanOutSizes {
  items: number;
  workers: readonly number[];
  perItem: number;
  /** Children of the one-child-workflow-per-item parent (PostgreSQL). */
  perChild: number;
  /** DBOS's one-workflow-per-item run is slower (its result polling): fewer items. */
  perItemDbos: number;
  memoryItems: readonly number[];
  /** Interleaved rounds of every throughput row; each row is the median. */
  rounds: number;
}
export const fanOutFullSizes: FanOutSizes = {
  items: 100_000,
  workers: [1, 2, 4],
  perItem: 2_000,
  perChild: 1_000,
  perItemDbos: 500,
  memoryItems: [10_000, 1_000_000],
  rounds: 3,
};
export const fanOutSmokeSizes: FanOutSizes = {
  items: 2_000,
  workers: [1, 2],
  perItem: 100,
  perChild: 100,
  perItemDbos: 50,
  memoryItems: [1_000, 5_000],
  rounds: 1,
};

const planOf = (fanOutId: string): FanOutPlan => ({
  fanOutId,
  executionId: `bench-${fanOutId}`,
  name: 'cases',
  task: trivial.name,
  taskVersion: trivial.version,
  chunkSize: 100,
  shards: ['main'],
  required: true,
  maxAttempts: 3,
});

const source = (total: number) => (from: number, limit: number) =>
  Array.from({ length: Math.max(0, Math.min(limit, total - from)) }, (_, k) => ({ i: from + k }));

/**
 * The worker script: `SKEIN_BENCH_FANOUT_CHILD` names another copy (an older build's, for an
 * interleaved A/B of the worker path); default this directory's.
 */
const childScript = () =>
  process.env.SKEIN_BENCH_FANOUT_CHILD ?? fileURLToPath(new URL('./fan-out-child.ts', import.meta.url));

/** Node flags of the worker processes, space-separated in `SKEIN_BENCH_FANOUT_CHILD_FLAGS` (e.g. `--cpu-prof`). */
const childFlags = () => (process.env.SKEIN_BENCH_FANOUT_CHILD_FLAGS ?? '').split(' ').filter(Boolean);

function spawnWorker(args: string[]): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...childFlags(), '--import', 'tsx', childScript(), ...args], {
    cwd: root,
    env: { TSX_TSCONFIG_PATH: `${root}tsconfig.json`, ...process.env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`bench worker exited (${code}) before it was ready`)));
  });
}

async function stopAll(children: readonly ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
          setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
        }),
    ),
  );
}

/** Create, dispatch and wait for every chunk: items/s from the create call to settled. */
async function endToEnd(store: FanOutStore, fanOutId: string, total: number): Promise<number> {
  const start = nowMs();
  await createFanOut({
    home: store,
    shards: { main: store },
    plan: planOf(fanOutId),
    task: trivial,
    items: source(total),
    owner: 'bench',
  });
  while (!(await fanOutSettled(fanOutId, { main: store }, total, 100)))
    await new Promise((r) => setTimeout(r, 50));
  return total / ((nowMs() - start) / 1000);
}

export async function onSqlite(total: number, workers: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'skein-bench-fanout-'));
  const path = join(dir, 'bench.db');
  const stores = openSqliteStores({ path, durability: 'normal' });
  const children: ChildProcess[] = [];
  try {
    for (let i = 0; i < workers; i++) children.push(await spawnWorker(['sqlite', path]));
    return await endToEnd(stores.fanOuts, 'f1', total);
  } finally {
    await stopAll(children);
    await stores.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function onPostgres(total: number, workers: number): Promise<number> {
  const schema = `skein_bench_fanout_${process.pid}_${workers}`;
  const prefix = `skeinbench.fanout.${process.pid}.${workers}`;
  const stores = await openPostgresStores({ url: PG_URL, schema, poolSize: 8 });
  const children: ChildProcess[] = [];
  let transport: AmqpTransport | undefined;
  let publisher: OutboxPublisher | undefined;
  try {
    transport = await AmqpTransport.connect({ url: AMQP_URL, prefix, onError: () => {} });
    // Every outbox write notifies the publisher (`wakeups`), so it polls at its default pace:
    // polling every few milliseconds would only claim nothing, hundreds of times a second.
    publisher = new OutboxPublisher({ stores, transport, batchSize: 500, wakeups: stores.wakeups });
    for (let i = 0; i < workers; i++) children.push(await spawnWorker(['postgres', schema, prefix]));
    publisher.start();
    return await endToEnd(stores.fanOuts, 'f1', total);
  } finally {
    await stopAll(children);
    await publisher?.stop();
    await transport?.close();
    await stores.close();
    await dropSchema(schema);
    if (transport) await dropTopology(prefix);
  }
}

async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
}

async function dropTopology(prefix: string): Promise<void> {
  await AmqpTransport.deleteTopology({
    url: AMQP_URL,
    prefix,
    topics: ['execution.pending', chunkReadyTopic('main')],
  });
}

/**
 * The limit PostgreSQL itself allows for a fan-out's writes, with no Skein code and no broker:
 * per chunk one statement that inserts its 100 results and closes the chunk row, 32 connections
 * at once (the fewest statements a chunk can cost; a worker writes more). Items/s.
 */
async function rawChunkFloor(total: number): Promise<number> {
  const schema = `bench_floor_${process.pid}`;
  const connections = 32;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  const clients: pg.Client[] = [];
  try {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
    await admin.query(`CREATE TABLE ${schema}.chunks (id int PRIMARY KEY, state text NOT NULL)`);
    await admin.query(
      `CREATE TABLE ${schema}.results (idx int PRIMARY KEY, value jsonb NOT NULL, attempt int NOT NULL)`,
    );
    const chunks = Math.ceil(total / 100);
    await admin.query(
      `INSERT INTO ${schema}.chunks SELECT g, 'running' FROM generate_series(0, ${chunks - 1}) g`,
    );
    for (let i = 0; i < connections; i++) {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      clients.push(client);
    }
    const statement = `WITH r AS (INSERT INTO ${schema}.results SELECT *, 1 FROM unnest($1::int[], $2::jsonb[]))
      UPDATE ${schema}.chunks SET state = 'done' WHERE id = $3`;
    let next = 0;
    const started = nowMs();
    await Promise.all(
      clients.map(async (client) => {
        for (let chunk = next++; chunk < chunks; chunk = next++) {
          const indexes = Array.from({ length: 100 }, (_, i) => chunk * 100 + i);
          const values = indexes.map((index) => JSON.stringify({ score: index % 7 }));
          await client.query(statement, [indexes, values, chunk]);
        }
      }),
    );
    return (chunks * 100) / ((nowMs() - started) / 1000);
  } finally {
    await Promise.all(clients.map((client) => client.end()));
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
}

/** The same work as one execution (one step) per item, in one process on SQLite. */
async function perItemSqlite(count: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'skein-bench-peritem-'));
  const stores = openSqliteStores({ path: join(dir, 'bench.db'), durability: 'normal' });
  const runtime = createRuntime({ stores, workflows: [perItem] });
  try {
    return await throughput(count, 64, async (i) => {
      const handle = await runtime.start(perItem, { i }, { executionId: `item-${i}` });
      await handle.result();
    });
  } finally {
    await runtime.close();
    await stores.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The same work as one child workflow per item: a parent awaiting `count` children, on PostgreSQL. */
async function perChildPostgres(count: number): Promise<number> {
  const schema = `skein_bench_fanout_children_${process.pid}`;
  const stores = await openPostgresStores({ url: PG_URL, schema, poolSize: 8 });
  const runtime = createRuntime({ stores, workflows: [perItem, perItemParent] });
  try {
    const start = nowMs();
    const handle = await runtime.start(perItemParent, { count }, { executionId: `parent-${count}` });
    const done = await handle.result();
    if (done !== count) throw new Error(`bench: the parent saw ${String(done)} children, not ${count}`);
    return count / ((nowMs() - start) / 1000);
  } finally {
    await runtime.close();
    await stores.close();
    await dropSchema(schema);
  }
}

/** What the creator child (fan-out-creator.mjs) reports: MB, and the creation's milliseconds. */
interface CreatorMemory {
  peakRss: number;
  loadedRss: number;
  heapPeak: number;
  ms: number;
}

/**
 * The memory of a process that only creates a fan-out of `total` items (no workers), in its
 * own process under plain `node` with the built packages, as an application runs it: its peak
 * RSS (the kernel's), on SQLite or on PostgreSQL.
 */
async function creatorMemory(total: number, on: 'sqlite' | 'postgres'): Promise<CreatorMemory> {
  const schema = `skein_bench_fanout_creator_${process.pid}_${total}`;
  const script = fileURLToPath(new URL('./fan-out-creator.mjs', import.meta.url));
  const child = spawn(process.execPath, [script, on, String(total), schema], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.on('data', (data: Buffer) => {
    out += data.toString();
  });
  try {
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    if (code !== 0) throw new Error(`bench: the fan-out creator exited with ${code}`);
    return JSON.parse(out.trim().split('\n').at(-1)!) as CreatorMemory;
  } finally {
    if (on === 'postgres') await dropSchema(schema);
  }
}

/** One execution (one step) per item through a peer-benchmark engine, `concurrency` at a time: items/s. */
async function perItemEngine(spec: EngineSpec, count: number): Promise<number> {
  return withTarget(spec, (target) =>
    withEngine(spec, target, async (engine) => {
      const run = await engine.prepare(1);
      return throughput(count, 64, run);
    }),
  );
}

type Measure = {
  metric: string;
  run: () => Promise<number>;
  row: (median: number, all: Map<string, number>) => Row;
};

const plural = (workers: number) => `${workers} worker process${workers > 1 ? 'es' : ''}`;
const PER_ITEM_SQLITE = 'one execution per item, Skein SQLite, 1 process';
const PER_ITEM_PG = 'one execution per item, Skein PostgreSQL, 1 process';
const PER_CHILD_PG = 'one child workflow per item, Skein PostgreSQL, 1 process';
const PER_ITEM_DBOS = 'one workflow per item, DBOS PostgreSQL, 1 process';
const RAW_FLOOR_PG = 'raw PostgreSQL: one statement per chunk (100 results + the chunk row), 32 connections';

/** What the scenario measures, in the order of one round. */
function measures(sizes: FanOutSizes, postgres: boolean): Measure[] {
  const list: Measure[] = [];
  const baselineRow = (metric: string) => (value: number) => ({ metric, value, unit: 'items/s' });
  list.push({
    metric: PER_ITEM_SQLITE,
    run: () => perItemSqlite(sizes.perItem),
    row: baselineRow(`${PER_ITEM_SQLITE} (${sizes.perItem} items, 64 at a time)`),
  });
  if (postgres) {
    list.push({
      metric: PER_ITEM_PG,
      run: () => perItemEngine(skeinPostgres, sizes.perItem),
      row: baselineRow(`${PER_ITEM_PG} (${sizes.perItem} items, 64 at a time)`),
    });
    list.push({
      metric: PER_CHILD_PG,
      run: () => perChildPostgres(sizes.perChild),
      row: baselineRow(`${PER_CHILD_PG} (a parent awaiting ${sizes.perChild} children)`),
    });
    list.push({
      metric: PER_ITEM_DBOS,
      run: () => perItemEngine(dbos, sizes.perItemDbos),
      row: baselineRow(`${PER_ITEM_DBOS} (${sizes.perItemDbos} items, 64 at a time)`),
    });
    // The floor, against the one-execution-per-item way: whether 50x is within what
    // PostgreSQL allows at all for the fan-out's own writes.
    list.push({
      metric: RAW_FLOOR_PG,
      run: () => rawChunkFloor(sizes.items),
      row: (value, all) => ({
        metric: `${RAW_FLOOR_PG}, no Skein, no broker (${sizes.items} items)`,
        value,
        unit: 'items/s',
        baseline: { name: PER_ITEM_PG, value: all.get(PER_ITEM_PG)! },
      }),
    });
  }
  for (const workers of sizes.workers)
    list.push({
      metric: `sqlite ${workers}`,
      run: () => onSqlite(sizes.items, workers),
      row: (value, all) => ({
        metric: `fan-out SQLite + StoreTransport, ${plural(workers)} (${sizes.items} items, chunk 100)`,
        value,
        unit: 'items/s',
        baseline: { name: PER_ITEM_SQLITE, value: all.get(PER_ITEM_SQLITE)! },
        target: '>= 50x baseline',
        met: value >= 50 * all.get(PER_ITEM_SQLITE)!,
      }),
    });
  if (postgres)
    for (const workers of sizes.workers)
      list.push({
        metric: `postgres ${workers}`,
        run: () => onPostgres(sizes.items, workers),
        row: (value, all) => ({
          metric: `fan-out PostgreSQL + RabbitMQ, ${plural(workers)} (${sizes.items} items, chunk 100)`,
          value,
          unit: 'items/s',
          baseline: { name: PER_ITEM_PG, value: all.get(PER_ITEM_PG)! },
          target: '>= 20000 and >= 50x baseline',
          met: value >= 20_000 && value >= 50 * all.get(PER_ITEM_PG)!,
        }),
      });
  return list;
}

/**
 * Every row, measured in `sizes.rounds` interleaved rounds (each round runs every measure once,
 * in the same order) and reported as medians, so the ratios come from the same run and load.
 */
export async function fanOut(sizes: FanOutSizes, pgUp: boolean, amqpUp: boolean): Promise<Row[]> {
  const list = measures(sizes, pgUp && amqpUp);
  const samples = new Map<string, number[]>(list.map((m) => [m.metric, []]));
  for (let round = 0; round < sizes.rounds; round++)
    for (const m of list) samples.get(m.metric)!.push(await m.run());
  const medians = new Map([...samples].map(([metric, values]) => [metric, median(values)]));
  const rows = list.map((m) => m.row(medians.get(m.metric)!, medians));
  if (pgUp && amqpUp)
    for (const workers of sizes.workers) {
      const value = medians.get(`postgres ${workers}`)!;
      rows.push({
        metric: `fan-out PostgreSQL + RabbitMQ, ${plural(workers)}, against DBOS one workflow per item`,
        value,
        unit: 'items/s',
        baseline: { name: PER_ITEM_DBOS, value: medians.get(PER_ITEM_DBOS)! },
      });
      rows.push({
        metric: `fan-out PostgreSQL + RabbitMQ, ${plural(workers)}, against one child workflow per item`,
        value,
        unit: 'items/s',
        baseline: { name: PER_CHILD_PG, value: medians.get(PER_CHILD_PG)! },
      });
    }
  for (const on of pgUp ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const))
    for (const total of sizes.memoryItems) {
      const memory = await creatorMemory(total, on);
      const where = `its own process, ${on === 'sqlite' ? 'SQLite' : 'PostgreSQL'}, ${total} items`;
      rows.push(
        {
          metric: `creator peak RSS (${where})`,
          value: memory.peakRss,
          unit: 'MB',
          target: '< 200',
          met: memory.peakRss < 200,
        },
        {
          metric: `creator RSS before creating (${where}; packages loaded, stores open)`,
          value: memory.loadedRss,
          unit: 'MB',
        },
        { metric: `creator V8 heap peak (${where})`, value: memory.heapPeak, unit: 'MB' },
      );
    }
  return rows;
}
