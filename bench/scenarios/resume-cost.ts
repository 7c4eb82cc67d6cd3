/**
 * The cost of one resume against the length of the log (issue #25 item 10, adr/0068): Skein on
 * SQLite, with the resident-body cache on (the default) and off (`cache: { maxResident: 0 }`,
 * every resume replays), in the same run, the two modes alternating for each length.
 *
 * - signals: one execution consumes `n` signals one after another, each sent once the previous
 *   one's resume has suspended again; a sample is signal sent to the next suspension durable.
 * - children: one execution awaits `n` children one after another (each child one step); a
 *   sample is one suspension of the parent to the next (its child starts, runs, ends and wakes it).
 *
 * Reported per mode and length: the median time of one resume over the first 100 resumes and
 * over the last 100, and the total. Flat in log length means the two medians match whatever `n`.
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

const leaf = defineWorkflow({
  name: 'leaf',
  input: z.number().int(),
  async run(ctx, i) {
    return ctx.step('one', () => i);
  },
});

/** A workflow that awaits `input` children one after another. */
const parent = defineWorkflow({
  name: 'parent',
  input: z.number().int().positive(),
  async run(ctx, n) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += await ctx.child(leaf, 1);
    return sum;
  },
});

type Mode = 'cache on' | 'cache off';
type Kind = 'signals' | 'children';

/** One execution of `kind` with `n` resumes; the latency of each, in ms. */
async function resumes(kind: Kind, n: number, mode: Mode): Promise<number[]> {
  const dir = mkdtempSync(join(tmpdir(), 'skein-bench-resume-'));
  const stores = openSqliteStores({ path: join(dir, 'bench.db'), durability: 'normal' });
  const id = `${kind}-1`;
  let wake: (() => void) | undefined;
  const observer: RuntimeObserver = {
    executionSuspended: (e) => {
      if (e.executionId === id) wake?.();
    },
    executionSettled: (e) => {
      if (e.executionId === id) wake?.();
    },
  };
  const runtime = createRuntime({
    stores,
    workflows: [ticker, parent, leaf],
    maintenance: false,
    observers: [observer],
    cache: { maxResident: mode === 'cache on' ? 1_000 : 0 },
  });
  try {
    const next = () => new Promise<void>((resolve) => (wake = resolve));
    let suspended = next();
    await runtime.start(kind === 'signals' ? ticker : parent, n, { executionId: id });
    await suspended;
    const samples: number[] = [];
    for (let i = 0; i < n; i++) {
      suspended = next();
      const start = nowMs();
      if (kind === 'signals') await runtime.signal(id, 'tick', 1);
      await suspended;
      samples.push(nowMs() - start);
    }
    if ((await runtime.handle<number>(id).result()) !== n) throw new Error('bench: wrong sum');
    return samples;
  } finally {
    await runtime.close();
    await stores.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Resume cost of signals and children at each of `lengths`, cache on and off alternating. */
export async function resumeCost(lengths: readonly number[]): Promise<Row[]> {
  const rows: Row[] = [];
  for (const kind of ['signals', 'children'] as const) {
    for (const [at, n] of lengths.entries()) {
      // Alternate which mode goes first, so neither always meets the same load.
      const modes: Mode[] = at % 2 === 0 ? ['cache on', 'cache off'] : ['cache off', 'cache on'];
      for (const mode of modes) {
        const start = nowMs();
        const samples = await resumes(kind, n, mode);
        const total = nowMs() - start;
        const window = Math.min(100, Math.floor(n / 2));
        const what = `resume, ${n} ${kind}, ${mode}`;
        rows.push(
          {
            metric: `${what}, first ${window} resumes, median`,
            value: median(samples.slice(0, window)),
            unit: 'ms',
          },
          {
            metric: `${what}, last ${window} resumes, median`,
            value: median(samples.slice(-window)),
            unit: 'ms',
          },
          { metric: `${what}, all of them`, value: total / 1000, unit: 's' },
        );
      }
    }
  }
  return rows;
}
