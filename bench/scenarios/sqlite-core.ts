/**
 * Core costs on SQLite (issues #2 and #26): the per-step cost against a raw commit at `full` and
 * `normal`, throughput at concurrency against the raw limit (sqlite-rounds.ts), and loadState
 * with snapshots.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStores } from '@skein/store-sqlite';
import { createRuntime, type EventStore, loadState } from '@skein/workflow-runtime';
import { stepsWorkflow as steps } from '../engines/skein.js';
import { median, sequential } from '../measure.js';
import type { Row } from '../report.js';
import { type RoundSizes, roundFullSizes, roundSmokeSizes, sqliteRounds } from './sqlite-rounds.js';

/** Counts of the scenario's loops. */
export interface Sizes {
  /** The rounds of the issue-26 targets (sqlite-rounds.ts). */
  rounds: RoundSizes;
  longHistorySteps: number;
}

export const fullSizes: Sizes = { rounds: roundFullSizes, longHistorySteps: 5000 };
export const smokeSizes: Sizes = { rounds: roundSmokeSizes, longHistorySteps: 60 };

function tempDb(): { path: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'skein-bench-'));
  return { path: join(dir, 'bench.db'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Run every core measurement; return the table rows. */
export async function sqliteCore(sizes: Sizes): Promise<Row[]> {
  const rows = await sqliteRounds(sizes.rounds);
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
