/**
 * Where the time of a SQLite step goes (issue #26), at `full` and at `normal`: a ladder of four
 * rungs timed in the same turns of 50 calls, each on a file of its own (warmed past the WAL's
 * first checkpoint), wall and CPU time per call:
 *
 * 1. a raw single-row commit (better-sqlite3, autocommit) — the floor;
 * 2. the statements the store runs for one step, written by hand on a file with Skein's schema:
 *    `BEGIN IMMEDIATE`, `PRAGMA data_version`, two `INSERT`s into `skein_events`, `COMMIT`;
 * 3. the store's `events.append` of those two events (its queue, checks and head cache);
 * 4. a step through the runtime, (T10 − T0) / 10 of 10-step and 0-step workflows.
 *
 * The difference between two rungs is what the upper one adds. Measurement only: nothing here
 * changes how Skein runs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStores } from '@skein/store-sqlite';
import { createRuntime } from '@skein/workflow-runtime';
import { newId } from '@skein/workflow-runtime/internal';
import type { AppendRequest } from '@skein/workflow-runtime/spi';
import Database from 'better-sqlite3';
import { WAL_WARM_COMMITS } from '../engines/raw-sqlite.js';
import { stepsWorkflow } from '../engines/skein.js';
import { median, nowMs } from '../measure.js';
import type { Row } from '../report.js';
import { breakdownRows, runtimeParts } from './step-breakdown.js';

type Durability = 'full' | 'normal';
type Loop = (i: number) => unknown;

export interface StepCostSizes {
  /** Calls of each loop. */
  count: number;
}
export const stepCostFullSizes: StepCostSizes = { count: 2000 };
export const stepCostSmokeSizes: StepCostSizes = { count: 50 };

const zero = stepsWorkflow(0);
const ten = stepsWorkflow(10);

/** The two events of a step: the last step's completion and the next one's start. */
function stepEvents(): AppendRequest['events'] {
  const recordedAt = Date.now();
  return [
    { envelopeId: newId(), type: 'STEP_COMPLETED', payload: '{"position":0,"output":2}', recordedAt },
    { envelopeId: newId(), type: 'STEP_STARTED', payload: '{"position":1,"name":"s1"}', recordedAt },
  ];
}

function pragmas(db: Database.Database, durability: Durability): void {
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${durability === 'full' ? 'FULL' : 'NORMAL'}`);
  db.pragma('foreign_keys = ON');
}

/** Wall and CPU time of every call, loops taking turns of 50. */
async function turns(
  count: number,
  loops: Record<string, Loop>,
): Promise<Record<string, { wall: number[]; cpu: number[] }>> {
  const names = Object.keys(loops);
  const got = Object.fromEntries(names.map((name) => [name, { wall: [] as number[], cpu: [] as number[] }]));
  for (let done = 0; done < count; done += 50) {
    for (const name of names) {
      for (let i = done; i < Math.min(count, done + 50); i++) {
        const start = nowMs();
        const cpu = process.cpuUsage();
        await loops[name]!(i);
        const used = process.cpuUsage(cpu);
        got[name]!.wall.push(nowMs() - start);
        got[name]!.cpu.push((used.user + used.system) / 1000);
      }
    }
  }
  return got;
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

async function ladder(durability: Durability, count: number, dir: string): Promise<Row[]> {
  // 1. The raw commit.
  const raw = new Database(join(dir, `raw-${durability}.db`));
  pragmas(raw, durability);
  raw.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
  const rawInsert = raw.prepare('INSERT INTO t (v) VALUES (?)');
  for (let i = 0; i < WAL_WARM_COMMITS; i++) rawInsert.run('{"warm":true}');

  // 2. The step's statements by hand, on a file the store migrated and started executions in.
  const handPath = join(dir, `hand-${durability}.db`);
  const handStores = openSqliteStores({ path: handPath, durability });
  const start = (stores: typeof handStores, id: string) =>
    stores.events.append({
      executionId: id,
      workflow: ten.name,
      expectedSeq: 0,
      fence: 0,
      events: [
        { envelopeId: newId(), type: 'EXECUTION_STARTED', payload: '{"input":1}', recordedAt: Date.now() },
        { envelopeId: newId(), type: 'STEP_STARTED', payload: '{"position":0}', recordedAt: Date.now() },
      ],
    });
  for (let i = 0; i < count; i++) await start(handStores, `hand-${i}`);
  for (let i = 0; i < WAL_WARM_COMMITS; i++) await start(handStores, `warm-${i}`);
  await handStores.close();
  const hand = new Database(handPath);
  pragmas(hand, durability);
  const begin = hand.prepare('BEGIN IMMEDIATE');
  const dataVersion = hand.prepare('PRAGMA data_version').pluck();
  const insert = hand.prepare(
    'INSERT INTO skein_events (execution_id, seq, envelope_id, type, payload, fence, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const commit = hand.prepare('COMMIT');

  // 3. The store's append, on executions it started.
  const stores = openSqliteStores({ path: join(dir, `store-${durability}.db`), durability });
  for (let i = 0; i < count; i++) await start(stores, `store-${i}`);
  for (let i = 0; i < WAL_WARM_COMMITS; i++) await start(stores, `warm-${i}`);

  // 4. Steps through the runtime.
  const runtimeStores = openSqliteStores({ path: join(dir, `runtime-${durability}.db`), durability });
  const runtime = createRuntime({ stores: runtimeStores, workflows: [zero, ten] });
  const run = (workflow: string, prefix: string) => (i: number) =>
    runtime.execute({ executionId: `${prefix}${i}`, workflow, input: { n: 1 } });
  for (let i = 0; i < 300; i++) await run(ten.name, 'warm-')(i);

  try {
    const got = await turns(count, {
      raw: (i) => rawInsert.run(`{"row":${i}}`),
      hand: (i) => {
        begin.run();
        dataVersion.get();
        for (const [k, event] of stepEvents().entries()) {
          insert.run(`hand-${i}`, 2 + k, event.envelopeId, event.type, event.payload, 0, event.recordedAt);
        }
        commit.run();
      },
      store: (i) =>
        stores.events.append({
          executionId: `store-${i}`,
          workflow: ten.name,
          expectedSeq: 2,
          fence: 0,
          events: stepEvents(),
        }),
      zero: run(zero.name, 'z'),
      ten: run(ten.name, 't'),
    });
    const wall = (name: string) => median(got[name]!.wall) * 1000;
    const cpu = (name: string) => mean(got[name]!.cpu) * 1000;
    const rungs = [
      { name: '1. raw single-row commit', wall: wall('raw'), cpu: cpu('raw') },
      { name: "2. the step's 5 statements by hand", wall: wall('hand'), cpu: cpu('hand') },
      { name: "3. the store's events.append", wall: wall('store'), cpu: cpu('store') },
      {
        name: '4. a step through the runtime, (T10 - T0) / 10',
        wall: (wall('ten') - wall('zero')) / 10,
        cpu: (cpu('ten') - cpu('zero')) / 10,
      },
    ];
    const rows: Row[] = [];
    for (const [k, rung] of rungs.entries()) {
      const below = rungs[k - 1];
      for (const what of ['wall', 'cpu'] as const) {
        rows.push({
          metric: `${durability}: ${rung.name}, ${what === 'wall' ? 'wall (median)' : 'CPU (mean)'}`,
          value: rung[what],
          unit: 'µs',
          ...(below === undefined ? {} : { baseline: { name: `rung ${k}`, value: below[what] } }),
        });
      }
    }
    const r = rungs.map((rung) => rung.cpu);
    const parts = runtimeParts(count * 10);
    rows.push(...breakdownRows(durability, { raw: r[0]!, hand: r[1]!, store: r[2]!, runtime: r[3]! }, parts));
    return rows;
  } finally {
    raw.close();
    hand.close();
    await runtime.close();
    await runtimeStores.close();
    await stores.close();
  }
}

/** The ladder at `full` and at `normal`. */
export async function stepCost(sizes: StepCostSizes): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'skein-bench-step-cost-'));
  try {
    return [...(await ladder('full', sizes.count, dir)), ...(await ladder('normal', sizes.count, dir))];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
