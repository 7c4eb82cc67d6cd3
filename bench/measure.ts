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

/**
 * Run several loops in turns of `turn` calls each until every loop has made `count` calls, so
 * a drift of the machine (another process, a checkpoint, a growing table) falls on all of them
 * alike; returns each loop's latencies in ms, by name.
 */
export async function interleaved<K extends string>(
  count: number,
  turn: number,
  loops: Record<K, (i: number) => Promise<unknown> | unknown>,
): Promise<Record<K, number[]>> {
  const names = Object.keys(loops) as K[];
  const samples = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<K, number[]>;
  for (let done = 0; done < count; done += turn) {
    const n = Math.min(turn, count - done);
    for (const name of names) samples[name].push(...(await sequential(n, (i) => loops[name](done + i))));
  }
  return samples;
}
