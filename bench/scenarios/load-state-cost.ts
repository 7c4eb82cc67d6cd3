/**
 * `loadState` against history length (issue #8): Skein on SQLite, one execution of about 100,
 * 1,000 and 10,000 events; the time of `loadState` with its snapshots (taken every 100 events,
 * the default) and after deleting them (a fold from seq 0), and how many events each reads.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStores } from '@skein/store-sqlite';
import { createRuntime, type EventStore, loadState, type Stores } from '@skein/workflow-runtime';
import { stepsWorkflow } from '../engines/skein.js';
import { median, sequential } from '../measure.js';
import type { Row } from '../report.js';

/** Events read by one loadState of `id`. */
async function eventsRead(stores: Stores, id: string): Promise<number> {
  let read = 0;
  const events: EventStore = Object.create(stores.events);
  events.read = async (executionId, from, limit) => {
    const got = await stores.events.read(executionId, from, limit);
    read += got.length;
    return got;
  };
  await loadState({ ...stores, events }, id);
  return read;
}

async function oneLength(stores: Stores, approxEvents: number, samples: number): Promise<Row[]> {
  const steps = Math.max(1, Math.round((approxEvents - 2) / 2)); // a step is 2 events; start and end 2 more
  const workflow = stepsWorkflow(steps);
  const runtime = createRuntime({ stores, workflows: [workflow] });
  const id = `long-${steps}`;
  const state = await runtime.execute({ executionId: id, workflow: workflow.name, input: { n: 0 } });
  await runtime.close();
  const length = state.sequence + 1;
  const withReads = await eventsRead(stores, id);
  const withMs = median(await sequential(samples, () => loadState(stores, id)));
  await stores.snapshots.delete(id);
  const zeroReads = await eventsRead(stores, id);
  const zeroMs = median(await sequential(samples, () => loadState(stores, id)));
  return [
    {
      metric: `loadState, ${length} events, with snapshots (${withReads} events read), median`,
      value: withMs,
      unit: 'ms',
    },
    {
      metric: `loadState, ${length} events, from zero (${zeroReads} events read), median`,
      value: zeroMs,
      unit: 'ms',
    },
  ];
}

/** loadState cost for histories of about each of `lengths` events. */
export async function loadStateCost(lengths: readonly number[], samples: number): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'skein-bench-loadstate-'));
  const stores = openSqliteStores({ path: join(dir, 'bench.db'), durability: 'normal' });
  try {
    const rows: Row[] = [];
    for (const length of lengths) rows.push(...(await oneLength(stores, length, samples)));
    return rows;
  } finally {
    await stores.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
