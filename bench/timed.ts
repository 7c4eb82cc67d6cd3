/**
 * Time-boxed loops for the peer benchmark: each cell runs for a time budget (within a minimum
 * and a maximum count), so a slow engine does not stretch the whole bench and a fast one still
 * gets enough samples.
 */
import { nowMs } from './measure.js';

/** How long one cell runs. */
export interface Budget {
  /** Keep going until this many seconds have passed… */
  seconds: number;
  /** …and at least this many runs are done… */
  minRuns: number;
  /** …but never more than this many runs. */
  maxRuns: number;
}

/** Latencies of runs one after another, and the throughput at concurrency 1 that they make. */
export async function timedSequential(
  budget: Budget,
  fn: (i: number) => Promise<void>,
): Promise<{ samples: number[]; perSec: number }> {
  const samples: number[] = [];
  const start = nowMs();
  while (samples.length < budget.maxRuns) {
    if (samples.length >= budget.minRuns && nowMs() - start >= budget.seconds * 1000) break;
    const begin = nowMs();
    await fn(samples.length);
    samples.push(nowMs() - begin);
  }
  return { samples, perSec: samples.length / ((nowMs() - start) / 1000) };
}

/** Runs per second with `concurrency` runs in flight; `first` is the index of the first run. */
export async function timedThroughput(
  budget: Budget,
  concurrency: number,
  first: number,
  fn: (i: number) => Promise<void>,
): Promise<{ runs: number; perSec: number }> {
  let started = 0;
  const start = nowMs();
  const more = () =>
    started < budget.maxRuns && (started < budget.minRuns || nowMs() - start < budget.seconds * 1000);
  const lane = async () => {
    while (more()) await fn(first + started++);
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return { runs: started, perSec: started / ((nowMs() - start) / 1000) };
}
