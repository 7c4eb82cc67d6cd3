/**
 * Core costs on SQLite (issue #2): per-step overhead against a raw commit, throughput at
 * concurrency, and loadState with snapshots.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStores } from '@skein/store-sqlite';
import { createRuntime, type EventStore, loadState } from '@skein/workflow-runtime';
import Database from 'better-sqlite3';
import { WAL_WARM_COMMITS } from '../engines/raw-sqlite.js';
import { stepsWorkflow as steps } from '../engines/skein.js';
import { median, percentile, sequential, throughput } from '../measure.js';
import type { Row } from '../report.js';
import { stepLatencies } from './step-latencies.js';

type Durability = 'full' | 'normal';

const zero = steps(0);
const one = steps(1);
const three = steps(3);

/** Counts of the scenario's loops. */
export interface Sizes {
  sequential: number;
  concurrent: number;
  normalConcurrent: number;
  longHistorySteps: number;
}

export const fullSizes: Sizes = {
  sequential: 2000,
  concurrent: 10_000,
  normalConcurrent: 30_000,
  longHistorySteps: 5000,
};
export const smokeSizes: Sizes = {
  sequential: 20,
  concurrent: 200,
  normalConcurrent: 200,
  longHistorySteps: 60,
};

function tempDb(): { path: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'skein-bench-'));
  return { path: join(dir, 'bench.db'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A raw single-row INSERT committed on its own, in a WAL file of its own at `durability`, warmed (see WAL_WARM_COMMITS). */
function rawInserter(durability: Durability): { insert(i: number): void; close(): void } {
  const db = tempDb();
  const sqlite = new Database(db.path);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`synchronous = ${durability === 'full' ? 'FULL' : 'NORMAL'}`);
  sqlite.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
  const insert = sqlite.prepare('INSERT INTO t (v) VALUES (?)');
  for (let i = 0; i < WAL_WARM_COMMITS; i++) insert.run('{"warm":true}');
  return {
    insert: (i) => {
      insert.run(`{"row":${i}}`);
    },
    close: () => {
      sqlite.close();
      db.cleanup();
    },
  };
}

async function withRuntime<T>(
  durability: Durability,
  fn: (runtime: ReturnType<typeof createRuntime>) => Promise<T>,
): Promise<T> {
  const db = tempDb();
  const stores = openSqliteStores({ path: db.path, durability });
  const runtime = createRuntime({ stores, workflows: [zero, one, three] });
  try {
    return await fn(runtime);
  } finally {
    await runtime.close();
    await stores.close();
    db.cleanup();
  }
}

/** Run every core measurement; return the table rows. */
export async function sqliteCore(sizes: Sizes): Promise<Row[]> {
  const rows: Row[] = [];
  const inserter = rawInserter('full');
  const { samples, raw, t0, t3 } = await withRuntime('full', (runtime) =>
    stepLatencies(runtime, { zero: zero.name, three: three.name }, inserter.insert, sizes.sequential, 200),
  ).finally(() => inserter.close());
  rows.push({ metric: 'raw better-sqlite3 insert+commit (full), median', value: raw, unit: 'ms' });
  rows.push({ metric: '0-step workflow (full), median', value: t0, unit: 'ms' });
  rows.push({ metric: '3-step workflow (full), median', value: t3, unit: 'ms' });
  rows.push({ metric: '3-step workflow (full), p99', value: percentile(samples.three, 99), unit: 'ms' });
  rows.push({
    metric: 'per-step overhead, marginal ((T3 - T0) / 3)',
    value: (t3 - t0) / 3,
    unit: 'ms',
    baseline: { name: 'raw commit', value: raw },
    target: '<= 1.5x raw',
    met: (t3 - t0) / 3 <= 1.5 * raw,
  });
  rows.push({
    metric: 'per step, all-in (T3 / 3)',
    value: t3 / 3,
    unit: 'ms',
    baseline: { name: 'raw commit', value: raw },
  });

  const wfPerSec = await withRuntime('full', (runtime) =>
    throughput(sizes.concurrent, 100, (i) =>
      runtime.execute({ executionId: `c${i}`, workflow: three.name, input: { n: i } }),
    ),
  );
  rows.push({
    metric: '3-step workflows/s, concurrency 100 (full)',
    value: wfPerSec,
    unit: 'wf/s',
    target: '>= 5000',
    met: wfPerSec >= 5000,
  });

  const execPerSec = await withRuntime('normal', (runtime) =>
    throughput(sizes.normalConcurrent, 200, (i) =>
      runtime.execute({ executionId: `n${i}`, workflow: one.name, input: { n: i } }),
    ),
  );
  rows.push({
    metric: '1-step executions/s, concurrency 200 (normal)',
    value: execPerSec,
    unit: 'exec/s',
    target: '>= 15000',
    met: execPerSec >= 15_000,
  });

  rows.push(...(await longHistory(sizes.longHistorySteps)));
  return rows;
}

/** loadState of a long history: events read with snapshots every 100, and time with and without. */
async function longHistory(stepCount: number): Promise<Row[]> {
  const db = tempDb();
  const stores = openSqliteStores({ path: db.path, durability: 'normal' });
  const long = steps(stepCount);
  const runtime = createRuntime({ stores, workflows: [long], snapshotEvery: 100 });
  try {
    const state = await runtime.execute({ executionId: 'long', workflow: long.name, input: { n: 0 } });
    let read = 0;
    const events: EventStore = Object.create(stores.events);
    events.read = async (id, from, limit) => {
      const got = await stores.events.read(id, from, limit);
      read += got.length;
      return got;
    };
    const counted = { events, snapshots: stores.snapshots };
    await loadState(counted, 'long');
    const eventsRead = read;
    const withSnap = median(await sequential(20, () => loadState(stores, 'long')));
    await stores.snapshots.delete('long');
    const withoutSnap = median(await sequential(20, () => loadState(stores, 'long')));
    return [
      {
        metric: `loadState of a ${state.sequence + 1}-event history: events read (snapshots every 100)`,
        value: eventsRead,
        unit: 'events',
        target: '<= ~100',
        met: eventsRead <= 101,
      },
      {
        metric: `loadState of a ${state.sequence + 1}-event history, with snapshot, median`,
        value: withSnap,
        unit: 'ms',
      },
      {
        metric: `loadState of a ${state.sequence + 1}-event history, from zero, median`,
        value: withoutSnap,
        unit: 'ms',
      },
    ];
  } finally {
    await runtime.close();
    await stores.close();
    db.cleanup();
  }
}
