/**
 * What the runtime's in-process maintenance (on by default) costs a start on SQLite: the same
 * one-step workflow started and awaited sequentially, and 2 000 at concurrency 50, by a runtime
 * with `maintenance` on (the default) and one with it off, in alternating rounds of one run.
 * Run from the repository root after `pnpm build`: `npx tsx bench/maintenance-cost.ts`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStores } from '@skein/store-sqlite';
import { createRuntime } from '@skein/workflow-runtime';
import { stepsWorkflow } from './engines/skein.js';
import { median, sequential, throughput } from './measure.js';

const one = stepsWorkflow(1);
const ROUNDS = 3;

async function measure(maintenance: boolean, round: number): Promise<{ p50: number; perSecond: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'skein-bench-maintenance-'));
  const stores = openSqliteStores({ path: join(dir, 'bench.db') });
  const runtime = createRuntime({ stores, workflows: [one], ...(maintenance ? {} : { maintenance: false }) });
  try {
    const id = (i: number) => `r${round}-${i}`;
    const latencies = await sequential(300, async (i) => {
      await (await runtime.start(one, { n: i }, { executionId: `seq-${id(i)}` })).result();
    });
    const perSecond = await throughput(2_000, 50, async (i) => {
      await (await runtime.start(one, { n: i }, { executionId: `con-${id(i)}` })).result();
    });
    return { p50: median(latencies), perSecond };
  } finally {
    await runtime.close();
    await stores.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const on: { p50: number; perSecond: number }[] = [];
const off: { p50: number; perSecond: number }[] = [];
for (let round = 0; round < ROUNDS; round++) {
  off.push(await measure(false, round));
  on.push(await measure(true, round));
}
const med = (rows: { p50: number; perSecond: number }[], key: 'p50' | 'perSecond') =>
  median(rows.map((r) => r[key]));
console.log('| maintenance | start→result p50 (ms, 1 step, sequential) | starts/s (2 000 at 50) |');
console.log('| --- | --- | --- |');
console.log(`| off | ${med(off, 'p50').toFixed(2)} | ${med(off, 'perSecond').toFixed(0)} |`);
console.log(`| on (default) | ${med(on, 'p50').toFixed(2)} | ${med(on, 'perSecond').toFixed(0)} |`);
console.log(
  `ratio on/off: p50 ${(med(on, 'p50') / med(off, 'p50')).toFixed(2)}, throughput ${(med(on, 'perSecond') / med(off, 'perSecond')).toFixed(2)}`,
);
