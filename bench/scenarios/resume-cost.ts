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
 * over the last 100, the total with the cache on, and the ratio of the last medians. Flat in log
 * length means the two medians match whatever `n`. With the cache off, the resumes between the
 * two windows run with the cache on (see `resumes`), so the 10,000 case takes seconds, not the
 * ten minutes its replays would.
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

/** One SQLite file, and an observer that reports the execution's suspensions and its end. */
interface Bench {
  stores: ReturnType<typeof openSqliteStores>;
  dir: string;
  observer: RuntimeObserver;
  /** Resolves at the execution's next suspension (or its end). */
  next(): Promise<void>;
}

function openBench(id: string): Bench {
  const dir = mkdtempSync(join(tmpdir(), 'skein-bench-resume-'));
  const stores = openSqliteStores({ path: join(dir, 'bench.db'), durability: 'normal' });
  let wake: (() => void) | undefined;
  const observer: RuntimeObserver = {
    executionSuspended: (e) => {
      if (e.executionId === id) wake?.();
    },
    executionSettled: (e) => {
      if (e.executionId === id) wake?.();
    },
  };
  return { stores, dir, observer, next: () => new Promise<void>((resolve) => (wake = resolve)) };
}

function runtimeOver(bench: Bench, maxResident: number) {
  return createRuntime({
    stores: bench.stores,
    workflows: [ticker, parent, leaf],
    maintenance: false,
    observers: [bench.observer],
    cache: { maxResident },
  });
}

/**
 * `count` resumes of `id` in `runtime`, each timed (a signal sent to the next suspension, or one
 * suspension of the parent to the next). A runtime that takes the execution over from another
 * (closed) one first wakes it: a child that ended meanwhile found no runtime to resume its parent.
 */
async function resumesIn(
  bench: Bench,
  runtime: ReturnType<typeof runtimeOver>,
  kind: Kind,
  id: string,
  count: number,
  takesOver: boolean,
): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const suspended = bench.next();
    const start = nowMs();
    if (kind === 'signals') await runtime.signal(id, 'tick', 1);
    else if (i === 0 && takesOver) await runtime.resumeIfArrived(id);
    await suspended;
    samples.push(nowMs() - start);
  }
  return samples;
}

/**
 * One execution of `kind` with `n` resumes: the first and the last `window` of them timed in
 * `mode`. With the cache off the resumes in between run in a runtime with the cache on (a
 * replay of each would cost O(n) for nothing measured): the log at the last resumes is the same
 * whichever runtime wrote it, and each of the last `window` resumes replays all of it.
 */
async function resumes(
  kind: Kind,
  n: number,
  mode: Mode,
  window: number,
): Promise<{ first: number[]; last: number[]; totalS?: number }> {
  const id = `${kind}-1`;
  const bench = openBench(id);
  const begin = nowMs();
  try {
    const measured = () => runtimeOver(bench, mode === 'cache on' ? 1_000 : 0);
    let runtime = measured();
    const suspended = bench.next();
    await runtime.start(kind === 'signals' ? ticker : parent, n, { executionId: id });
    await suspended;
    const first = await resumesIn(bench, runtime, kind, id, window, false);
    if (mode === 'cache off') {
      await runtime.close();
      runtime = runtimeOver(bench, 1_000);
      await resumesIn(bench, runtime, kind, id, n - 2 * window, true);
      await runtime.close();
      runtime = measured();
      const last = await resumesIn(bench, runtime, kind, id, window, true);
      if ((await runtime.handle<number>(id).result()) !== n) throw new Error('bench: wrong sum');
      await runtime.close();
      return { first, last };
    }
    await resumesIn(bench, runtime, kind, id, n - 2 * window, false);
    const last = await resumesIn(bench, runtime, kind, id, window, false);
    if ((await runtime.handle<number>(id).result()) !== n) throw new Error('bench: wrong sum');
    await runtime.close();
    return { first, last, totalS: (nowMs() - begin) / 1000 };
  } finally {
    await bench.stores.close();
    rmSync(bench.dir, { recursive: true, force: true });
  }
}

/** Resume cost of signals and children at each of `lengths`, cache on and off alternating. */
export async function resumeCost(lengths: readonly number[]): Promise<Row[]> {
  const rows: Row[] = [];
  for (const kind of ['signals', 'children'] as const) {
    for (const [at, n] of lengths.entries()) {
      // Alternate which mode goes first, so neither always meets the same load.
      const modes: Mode[] = at % 2 === 0 ? ['cache on', 'cache off'] : ['cache off', 'cache on'];
      const window = Math.min(100, Math.floor(n / 2));
      const medians: Partial<Record<Mode, number>> = {};
      for (const mode of modes) {
        const { first, last, totalS } = await resumes(kind, n, mode, window);
        const what = `resume, ${n} ${kind}, ${mode}`;
        medians[mode] = median(last);
        rows.push(
          { metric: `${what}, first ${window} resumes, median`, value: median(first), unit: 'ms' },
          { metric: `${what}, last ${window} resumes, median`, value: median(last), unit: 'ms' },
        );
        if (totalS !== undefined) rows.push({ metric: `${what}, all of them`, value: totalS, unit: 's' });
      }
      rows.push({
        metric: `resume, ${n} ${kind}, last ${window} resumes, cache off / cache on`,
        value: medians['cache off']! / medians['cache on']!,
        unit: 'x',
      });
    }
  }
  return rows;
}
