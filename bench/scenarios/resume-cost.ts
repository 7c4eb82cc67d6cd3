/**
 * The cost of one resume against the length of the log (issue #25 item 10): Skein on SQLite,
 * one execution that consumes `n` signals one after another, each sent once the previous one's
 * resume has suspended again. Reported: the median time of one resume (signal sent to the next
 * suspension durable) over the first 100 resumes and over the last 100, for each `n`, and the
 * total. Flat in log length means the two medians match whatever `n` is.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStores } from '@skein/store-sqlite';
import { createRuntime, defineWorkflow, type RuntimeObserver } from '@skein/workflow-runtime';
import { z } from 'zod';
import { median, nowMs } from '../measure.js';
import type { Row } from '../report.js';

/** A workflow that waits for `tick` signals until it has `input` of them. */
const ticker = defineWorkflow({
  name: 'ticker',
  input: z.number().int().positive(),
  signals: { tick: z.number() },
  async run(ctx, n) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += Number(await ctx.waitForSignal('tick'));
    return sum;
  },
});

/** Resumes of one execution of `n` signals; the latency of each, in ms. */
async function resumes(n: number): Promise<number[]> {
  const dir = mkdtempSync(join(tmpdir(), 'skein-bench-resume-'));
  const stores = openSqliteStores({ path: join(dir, 'bench.db'), durability: 'normal' });
  let wake: (() => void) | undefined;
  const observer: RuntimeObserver = {
    executionSuspended: () => wake?.(),
    executionSettled: () => wake?.(),
  };
  const runtime = createRuntime({ stores, workflows: [ticker], maintenance: false, observers: [observer] });
  try {
    const next = () => new Promise<void>((resolve) => (wake = resolve));
    let suspended = next();
    await runtime.start(ticker, n, { executionId: 'ticker-1' });
    await suspended;
    const samples: number[] = [];
    for (let i = 0; i < n; i++) {
      suspended = next();
      const start = nowMs();
      await runtime.signal('ticker-1', 'tick', 1);
      await suspended;
      samples.push(nowMs() - start);
    }
    if ((await runtime.handle<number>('ticker-1').result()) !== n) throw new Error('bench: wrong sum');
    return samples;
  } finally {
    await runtime.close();
    await stores.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Resume cost at each of `lengths` signals. */
export async function resumeCost(lengths: readonly number[]): Promise<Row[]> {
  const rows: Row[] = [];
  for (const n of lengths) {
    const start = nowMs();
    const samples = await resumes(n);
    const total = nowMs() - start;
    const window = Math.min(100, Math.floor(n / 2));
    rows.push(
      {
        metric: `resume, ${n} signals, first ${window} resumes, median`,
        value: median(samples.slice(0, window)),
        unit: 'ms',
      },
      {
        metric: `resume, ${n} signals, last ${window} resumes, median`,
        value: median(samples.slice(-window)),
        unit: 'ms',
      },
      { metric: `resume, ${n} signals, all of them`, value: total / 1000, unit: 's' },
    );
  }
  return rows;
}
