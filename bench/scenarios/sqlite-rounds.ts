/**
 * The SQLite targets of issue #26, each measured in rounds that take turns with the raw commit
 * they are compared with (medians over the rounds, through whatever `@skein/*` resolves to):
 *
 * - per step, (T10 − T0) / 10, at `full` and at `normal`, against a raw single-row commit at
 *   the same durability, wall (median of each round's medians) and CPU (process.cpuUsage);
 * - 3-step workflows/s at concurrency 100 (`full`) against the raw limit: a raw 100-row batch
 *   commit's rows/s divided by the events one such workflow writes;
 * - 1-step executions/s at concurrency 200 (`normal`), with the CPU each one costs, next to the
 *   floor: the store's statements for the same executions written by hand on a file with
 *   Skein's schema, as many per transaction as group commit puts in one.
 *
 * A ratio is taken within each round (both sides timed minutes apart at most, on the same
 * machine) and the median of the rounds' ratios is reported.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStores } from '@skein/store-sqlite';
import { createRuntime, type Runtime } from '@skein/workflow-runtime';
import { newId } from '@skein/workflow-runtime/internal';
import Database from 'better-sqlite3';
import { WAL_WARM_COMMITS } from '../engines/raw-sqlite.js';
import { stepsWorkflow } from '../engines/skein.js';
import { median, nowMs } from '../measure.js';
import type { Row } from '../report.js';

type Durability = 'full' | 'normal';

const zero = stepsWorkflow(0);
const one = stepsWorkflow(1);
const three = stepsWorkflow(3);
const ten = stepsWorkflow(10);

/** Counts of the rounds. */
export interface RoundSizes {
  rounds: number;
  /** Sequential calls of each loop per round. */
  sequential: number;
  /** Workflows per round at concurrency 100 (`full`). */
  concurrent: number;
  /** Executions per round at concurrency 200 (`normal`). */
  normalConcurrent: number;
  /** Raw 100-row batches per round. */
  batches: number;
}

export const roundFullSizes: RoundSizes = {
  rounds: 5,
  sequential: 400,
  concurrent: 3000,
  normalConcurrent: 10_000,
  batches: 300,
};
export const roundSmokeSizes: RoundSizes = {
  rounds: 1,
  sequential: 20,
  concurrent: 200,
  normalConcurrent: 200,
  batches: 5,
};

/** Wall (ms) and CPU (µs) of `fn`. */
async function timed(fn: () => Promise<unknown> | unknown): Promise<{ wallMs: number; cpuUs: number }> {
  const cpu = process.cpuUsage();
  const start = nowMs();
  await fn();
  const used = process.cpuUsage(cpu);
  return { wallMs: nowMs() - start, cpuUs: used.user + used.system };
}

/** A warmed WAL file of its own with a one-column table; `rows` rows per commit. */
function rawTable(path: string, durability: Durability, rows: number): (i: number) => void {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${durability === 'full' ? 'FULL' : 'NORMAL'}`);
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
  for (let i = 0; i < WAL_WARM_COMMITS; i++) insert.run('{"warm":true}');
  const batch = db.transaction((i: number) => {
    for (let k = 0; k < rows; k++) insert.run(`{"run":${i},"row":${k}}`);
  });
  closers.push(() => {
    db.close();
  });
  return rows === 1 ? (i) => insert.run(`{"row":${i}}`) : (i) => batch(i);
}

const closers: (() => void | Promise<void>)[] = [];

async function openRuntime(path: string, durability: Durability): Promise<Runtime> {
  const stores = openSqliteStores({ path, durability });
  const runtime = createRuntime({ stores, workflows: [zero, one, three, ten] });
  closers.push(async () => {
    await runtime.close();
    await stores.close();
  });
  return runtime;
}

/** One round of the sequential ladder: raw, T0 and T10 in turns of 50; per-call wall medians and CPU means. */
async function sequentialRound(
  raw: (i: number) => void,
  runtime: Runtime,
  tag: string,
  count: number,
): Promise<{ raw: number; perStep: number; rawCpu: number; perStepCpu: number }> {
  const wall = { raw: [] as number[], zero: [] as number[], ten: [] as number[] };
  const cpu = { raw: 0, zero: 0, ten: 0 };
  const run = (workflow: string, prefix: string, i: number) =>
    runtime.execute({ executionId: `${tag}${prefix}${i}`, workflow, input: { n: 1 } });
  for (let done = 0; done < count; done += 50) {
    for (const [name, call] of [
      ['raw', (i: number) => raw(i)],
      ['zero', (i: number) => run(zero.name, 'z', i)],
      ['ten', (i: number) => run(ten.name, 't', i)],
    ] as const) {
      for (let i = done; i < Math.min(count, done + 50); i++) {
        const { wallMs, cpuUs } = await timed(() => call(i));
        wall[name].push(wallMs * 1000);
        cpu[name] += cpuUs;
      }
    }
  }
  return {
    raw: median(wall.raw),
    perStep: (median(wall.ten) - median(wall.zero)) / 10,
    rawCpu: cpu.raw / count,
    perStepCpu: (cpu.ten - cpu.zero) / count / 10,
  };
}

/** `count` executions of `workflow` with at most `concurrency` in flight: per second, and CPU µs each. */
async function concurrentRound(
  runtime: Runtime,
  workflow: string,
  tag: string,
  count: number,
  concurrency: number,
): Promise<{ perSec: number; cpuUs: number }> {
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const i = next++;
      await runtime.execute({ executionId: `${tag}${i}`, workflow, input: { n: i } });
    }
  };
  const { wallMs, cpuUs } = await timed(() => Promise.all(Array.from({ length: concurrency }, lane)));
  return { perSec: count / (wallMs / 1000), cpuUs: cpuUs / count };
}

/** Appends of a 1-step execution group commit puts in one transaction at concurrency 200. */
const HAND_BATCH = 200;

/**
 * The floor of a 1-step execution at `normal`: what the store runs for one, by hand on a file
 * with Skein's schema, 200 per transaction. The start: the head read (a miss), `EXECUTION_STARTED`
 * and `STEP_STARTED`, the head upsert; the end: `STEP_COMPLETED`, `EXECUTION_COMPLETED`, the
 * status update; each transaction with `BEGIN IMMEDIATE`, `PRAGMA data_version`, `COMMIT`.
 */
async function handExecutions(path: string): Promise<(tag: string, count: number) => void> {
  const stores = openSqliteStores({ path, durability: 'normal' });
  await stores.close();
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  closers.push(() => {
    db.close();
  });
  const begin = db.prepare('BEGIN IMMEDIATE');
  const dataVersion = db.prepare('PRAGMA data_version').pluck();
  const commit = db.prepare('COMMIT');
  const selectHead = db.prepare(
    'SELECT x.fence, coalesce((SELECT max(seq) FROM skein_events e WHERE e.execution_id = x.execution_id), -1) ' +
      'AS lastSeq, x.status, x.workflow FROM skein_executions x WHERE x.execution_id = ?',
  );
  const insert = db.prepare(
    'INSERT INTO skein_events (execution_id, seq, envelope_id, type, payload, fence, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const upsert = db.prepare(
    'INSERT INTO skein_executions (execution_id, workflow, status) VALUES (?, ?, ?) ' +
      'ON CONFLICT (execution_id) DO UPDATE SET workflow = coalesce(skein_executions.workflow, excluded.workflow), ' +
      'status = excluded.status',
  );
  const setStatus = db.prepare('UPDATE skein_executions SET status = ? WHERE execution_id = ?');
  const event = (id: string, seq: number, type: string, payload: string) =>
    insert.run(id, seq, newId(), type, payload, 0, Date.now());
  return (tag, count) => {
    for (let first = 0; first < count; first += HAND_BATCH) {
      const last = Math.min(count, first + HAND_BATCH);
      begin.run();
      dataVersion.get();
      for (let i = first; i < last; i++) {
        const id = `${tag}${i}`;
        selectHead.get(id);
        event(id, 0, 'EXECUTION_STARTED', `{"workflow":"${one.name}","version":1,"input":{"n":${i}}}`);
        event(id, 1, 'STEP_STARTED', '{"position":0,"name":"s0","attempt":1}');
        upsert.run(id, one.name, 'running');
      }
      commit.run();
      begin.run();
      dataVersion.get();
      for (let i = first; i < last; i++) {
        const id = `${tag}${i}`;
        event(
          id,
          2,
          'STEP_COMPLETED',
          `{"position":0,"name":"s0","kind":"step","output":${i + 1},"attempt":1}`,
        );
        event(id, 3, 'EXECUTION_COMPLETED', `{"output":${i + 1}}`);
        setStatus.run('completed', id);
      }
      commit.run();
    }
  };
}

/** Every round of every target; the rows, medians over the rounds. */
export async function sqliteRounds(sizes: RoundSizes): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'skein-bench-rounds-'));
  try {
    return await measure(sizes, dir);
  } finally {
    for (const close of closers.splice(0).reverse()) await close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measure(sizes: RoundSizes, dir: string): Promise<Row[]> {
  const raws = {
    full: rawTable(join(dir, 'raw-full.db'), 'full', 1),
    normal: rawTable(join(dir, 'raw-normal.db'), 'normal', 1),
  };
  const batchFull = rawTable(join(dir, 'batch-full.db'), 'full', 100);
  const hand = await handExecutions(join(dir, 'hand-normal.db'));
  const runtimes = {
    full: await openRuntime(join(dir, 'skein-full.db'), 'full'),
    normal: await openRuntime(join(dir, 'skein-normal.db'), 'normal'),
  };
  for (const durability of ['full', 'normal'] as const) {
    const runtime = runtimes[durability];
    for (let i = 0; i < 200; i++)
      await runtime.execute({ executionId: `warm${i}`, workflow: ten.name, input: { n: 1 } });
  }
  const probe = await runtimes.full.execute({ executionId: 'probe', workflow: three.name, input: { n: 1 } });
  const eventsPerThree = probe.sequence + 1;

  const seq = {
    full: [] as Awaited<ReturnType<typeof sequentialRound>>[],
    normal: [] as Awaited<ReturnType<typeof sequentialRound>>[],
  };
  const c100: { perSec: number; cpuUs: number; limit: number }[] = [];
  const c200: { perSec: number; cpuUs: number }[] = [];
  const floor: { perSec: number; cpuUs: number }[] = [];
  let batchSerial = 0;
  for (let round = 0; round < sizes.rounds; round++) {
    for (const durability of ['full', 'normal'] as const) {
      seq[durability].push(
        await sequentialRound(raws[durability], runtimes[durability], `r${round}`, sizes.sequential),
      );
    }
    const batches = await timed(() => {
      for (let i = 0; i < sizes.batches; i++) batchFull(batchSerial++);
    });
    const rowsPerSec = (sizes.batches * 100) / (batches.wallMs / 1000);
    const wf = await concurrentRound(runtimes.full, three.name, `c${round}-`, sizes.concurrent, 100);
    c100.push({ ...wf, limit: rowsPerSec / eventsPerThree });
    c200.push(await concurrentRound(runtimes.normal, one.name, `n${round}-`, sizes.normalConcurrent, 200));
    const byHand = await timed(() => hand(`h${round}-`, sizes.normalConcurrent));
    floor.push({
      perSec: sizes.normalConcurrent / (byHand.wallMs / 1000),
      cpuUs: byHand.cpuUs / sizes.normalConcurrent,
    });
  }

  const med = (xs: number[]) => median(xs);
  const rows: Row[] = [];
  const targets = { full: 1.3, normal: 2.5 };
  for (const durability of ['full', 'normal'] as const) {
    const got = seq[durability];
    const ratio = med(got.map((r) => r.perStep / r.raw));
    const cpuRatio = med(got.map((r) => r.perStepCpu / r.rawCpu));
    rows.push({
      metric: `${durability}: raw single-row commit, wall`,
      value: med(got.map((r) => r.raw)),
      unit: 'µs',
    });
    rows.push({
      metric: `${durability}: per step (T10 - T0) / 10, wall; ratio = median of ${got.length} rounds' ratios`,
      value: med(got.map((r) => r.perStep)),
      unit: 'µs',
      baseline: { name: 'raw commit', value: med(got.map((r) => r.perStep)) / ratio },
      target: `<= ${targets[durability]}x raw`,
      met: ratio <= targets[durability],
    });
    rows.push({
      metric: `${durability}: raw single-row commit, CPU`,
      value: med(got.map((r) => r.rawCpu)),
      unit: 'µs',
    });
    rows.push({
      metric: `${durability}: per step (T10 - T0) / 10, CPU`,
      value: med(got.map((r) => r.perStepCpu)),
      unit: 'µs',
      baseline: { name: 'raw commit CPU', value: med(got.map((r) => r.perStepCpu)) / cpuRatio },
    });
  }
  const limitRatio = med(c100.map((r) => r.perSec / r.limit));
  rows.push({
    metric: `raw 100-row batch (full) / ${eventsPerThree} events: 3-step workflows/s the raw limit allows`,
    value: med(c100.map((r) => r.limit)),
    unit: 'wf/s',
  });
  rows.push({
    metric: "3-step workflows/s, concurrency 100 (full); ratio = median of the rounds' ratios",
    value: med(c100.map((r) => r.perSec)),
    unit: 'wf/s',
    baseline: { name: 'raw limit', value: med(c100.map((r) => r.perSec)) / limitRatio },
    target: '>= 0.3x raw limit',
    met: limitRatio >= 0.3,
  });
  rows.push({
    metric: '3-step workflow at concurrency 100 (full), CPU each',
    value: med(c100.map((r) => r.cpuUs)),
    unit: 'µs',
  });
  const execPerSec = med(c200.map((r) => r.perSec));
  rows.push({
    metric: '1-step executions/s, concurrency 200 (normal)',
    value: execPerSec,
    unit: 'exec/s',
    target: '>= 40000',
    met: execPerSec >= 40_000,
  });
  const floorCpu = med(floor.map((r) => r.cpuUs));
  rows.push({
    metric: '1-step execution at concurrency 200 (normal), CPU each',
    value: med(c200.map((r) => r.cpuUs)),
    unit: 'µs',
    baseline: { name: "the store's statements by hand", value: floorCpu },
  });
  rows.push({
    metric:
      "floor: the store's statements of a 1-step execution by hand, 200 per transaction (normal), CPU each",
    value: floorCpu,
    unit: 'µs',
  });
  rows.push({
    metric: 'floor: 1-step executions/s those statements alone allow (normal), one core',
    value: med(floor.map((r) => r.perSec)),
    unit: 'exec/s',
  });
  return rows;
}
