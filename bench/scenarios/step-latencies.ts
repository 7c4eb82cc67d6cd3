/**
 * The core suites' per-step measurement: the raw commit, the 0-step and the 3-step workflow
 * take turns of 50 calls, so all three see the same machine (ADR 0017).
 */
import type { Runtime } from '@skein/workflow-runtime';
import { interleaved, median, sequential } from '../measure.js';

/** What {@link stepLatencies} measured: every sample, and the medians the targets use. */
export interface StepLatencies {
  samples: { raw: number[]; zero: number[]; three: number[] };
  raw: number;
  t0: number;
  t3: number;
  /** (T3 - T0) / 3. */
  perStep: number;
}

/**
 * Warm `runtime` up with `warmup` 3-step runs and the raw commit with 50, then time `count`
 * of each in turns. `zero` and `three` name the 0- and 3-step workflows; `raw` commits once.
 */
export async function stepLatencies(
  runtime: Runtime,
  workflows: { zero: string; three: string },
  raw: (i: number) => unknown,
  count: number,
  warmup: number,
): Promise<StepLatencies> {
  const run = (prefix: string, workflow: string) => (i: number) =>
    runtime.execute({ executionId: `${prefix}${i}`, workflow, input: { n: 1 } });
  await sequential(warmup, run('warm', workflows.three));
  await sequential(50, raw);
  const samples = await interleaved(count, 50, {
    raw,
    zero: run('z', workflows.zero),
    three: run('t', workflows.three),
  });
  const [rawMs, t0, t3] = [median(samples.raw), median(samples.zero), median(samples.three)];
  return { samples, raw: rawMs, t0, t3, perStep: (t3 - t0) / 3 };
}
