/**
 * Continue-as-new keeps a looping workflow's cost flat (issue #23 item 4, adr/0063): Skein on
 * SQLite, one execution that consumes `n` signals one after another, each sent once the
 * previous resume has suspended; once as one growing log, once continuing as new every
 * `every` signals. Interleaved rounds; reported: the median of each round's median time of one
 * resume over the last 100 resumes, the median total, and their ratios (continuing / one log).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStores } from '@skein/store-sqlite';
import { createRuntime, defineWorkflow, type RuntimeObserver } from '@skein/workflow-runtime';
import { z } from 'zod';
import { median, nowMs } from '../measure.js';
import type { Row } from '../report.js';

/** Waits for `tick` signals until it has `left` more; continues as new every `every` of them (0: never). */
const looper = defineWorkflow({
  name: 'looper',
  input: z.object({ left: z.number().int().nonnegative(), every: z.number().int().nonnegative() }),
  signals: { tick: z.number() },
  async run(ctx, { left, every }) {
    for (let done = 1; done <= left; done++) {
      await ctx.waitForSignal('tick');
      if (every > 0 && done % every === 0 && done < left)
        await ctx.continueAsNew({ left: left - done, every });
    }
    return 'done';
  },
});

/** One execution of `n` signals: each resume's latency (signal sent to the next suspension or end), in ms. */
async function resumes(n: number, every: number): Promise<{ samples: number[]; total: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'skein-bench-continue-'));
  const stores = openSqliteStores({ path: join(dir, 'bench.db'), durability: 'normal' });
  let wake: (() => void) | undefined;
  const observer: RuntimeObserver = {
    executionSuspended: () => wake?.(),
    executionSettled: (e) => {
      if (e.status !== 'continued') wake?.();
    },
  };
  const runtime = createRuntime({ stores, workflows: [looper], maintenance: false, observers: [observer] });
  try {
    const next = () => new Promise<void>((resolve) => (wake = resolve));
    let suspended = next();
    const began = nowMs();
    await runtime.start(looper, { left: n, every }, { executionId: 'loop-1' });
    await suspended;
    const samples: number[] = [];
    for (let i = 0; i < n; i++) {
      suspended = next();
      const start = nowMs();
      await runtime.signal('loop-1', 'tick', 1);
      await suspended;
      samples.push(nowMs() - start);
    }
    if ((await runtime.result('loop-1')) !== 'done') throw new Error('bench: the loop did not end');
    return { samples, total: nowMs() - began };
  } finally {
    await runtime.close();
    await stores.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Interleaved rounds of both variants at `n` signals, continuing every `every`. */
export async function continueAsNew(n: number, every: number, rounds: number): Promise<Row[]> {
  const last = Math.min(100, Math.floor(n / 2));
  const one = { resume: [] as number[], total: [] as number[] };
  const cont = { resume: [] as number[], total: [] as number[] };
  for (let round = 0; round < rounds; round++) {
    for (const [variant, into] of [
      [0, one],
      [every, cont],
    ] as const) {
      const { samples, total } = await resumes(n, variant);
      into.resume.push(median(samples.slice(-last)));
      into.total.push(total);
    }
  }
  const rows: Row[] = [
    { metric: `${n} signals, one log: resume, last ${last}, median`, value: median(one.resume), unit: 'ms' },
    {
      metric: `${n} signals, continue every ${every}: resume, last ${last}, median`,
      value: median(cont.resume),
      unit: 'ms',
    },
    {
      metric: 'ratio (continuing / one log), resume',
      value: median(cont.resume) / median(one.resume),
      unit: 'x',
    },
    { metric: `${n} signals, one log: total`, value: median(one.total) / 1000, unit: 's' },
    { metric: `${n} signals, continue every ${every}: total`, value: median(cont.total) / 1000, unit: 's' },
    {
      metric: 'ratio (continuing / one log), total',
      value: median(cont.total) / median(one.total),
      unit: 'x',
    },
  ];
  return rows;
}
