/** Timing helpers for the benchmarks: wall time, percentiles, bounded concurrency. */

/** Milliseconds, with sub-millisecond resolution. */
export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** The p-th percentile (0–100) of `samples`. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Run `fn` `count` times one after another; return each call's latency in ms. */
export async function sequential(
  count: number,
  fn: (i: number) => Promise<unknown> | unknown,
): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = nowMs();
    await fn(i);
    samples.push(nowMs() - start);
  }
  return samples;
}

/** Run `fn` `count` times with at most `concurrency` in flight; return calls per second. */
export async function throughput(
  count: number,
  concurrency: number,
  fn: (i: number) => Promise<unknown>,
): Promise<number> {
  let next = 0;
  const start = nowMs();
  const lane = async () => {
    while (next < count) await fn(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
  return count / ((nowMs() - start) / 1000);
}

/** Median of samples. */
export function median(samples: readonly number[]): number {
  return percentile(samples, 50);
}
