/**
 * Skein side by side with its peers (issue #8): the same workflow shapes (0, 1, 3 and 10 steps)
 * on every engine in one run — Skein on SQLite (full, normal) and PostgreSQL, DBOS Transact on
 * the same PostgreSQL server, and the raw commits that bound them — measuring sequential latency
 * (median, p99) and throughput at concurrency 1, 10, 50 and 100.
 */
import { type EngineSpec, type Runner, SHAPES, type Shape } from '../engines/engine.js';
import { withEngine, withTarget } from '../engines/lifecycle.js';
import { median, percentile } from '../measure.js';
import { type Budget, timedSequential, timedThroughput } from '../timed.js';

/** Loop sizes of the scenario. */
export interface PeerSizes {
  /** Runs before measuring each cell. */
  warmup: number;
  sequential: Budget;
  concurrent: Budget;
  /** Concurrency levels above 1. */
  levels: readonly number[];
}

export const peersFullSizes: PeerSizes = {
  warmup: 20,
  sequential: { seconds: 1.5, minRuns: 100, maxRuns: 3000 },
  concurrent: { seconds: 1.5, minRuns: 300, maxRuns: 30_000 },
  levels: [10, 50, 100],
};
export const peersSmokeSizes: PeerSizes = {
  warmup: 2,
  sequential: { seconds: 0, minRuns: 5, maxRuns: 5 },
  concurrent: { seconds: 0, minRuns: 30, maxRuns: 30 },
  levels: [10, 50, 100],
};

/** The measurements of one engine on one shape (`shape` is null for a limit, which has none). */
export interface Cell {
  engine: string;
  kind: EngineSpec['kind'];
  store: EngineSpec['store'];
  shape: Shape | null;
  rowsPerRun: number;
  medianMs: number;
  p99Ms: number;
  /** Runs per second by concurrency (1 is the sequential loop). */
  perSec: Record<number, number>;
  /** How many runs each number is made of, by concurrency. */
  runs: Record<number, number>;
}

async function measureCell(
  run: Runner,
  sizes: PeerSizes,
): Promise<Omit<Cell, 'engine' | 'kind' | 'store' | 'shape' | 'rowsPerRun'>> {
  let next = 0;
  for (; next < sizes.warmup; next++) await run(next);
  const base = next;
  const seq = await timedSequential(sizes.sequential, (i) => run(base + i));
  next += seq.samples.length;
  const perSec: Record<number, number> = { 1: seq.perSec };
  const runs: Record<number, number> = { 1: seq.samples.length };
  for (const level of sizes.levels) {
    const got = await timedThroughput(sizes.concurrent, level, next, run);
    perSec[level] = got.perSec;
    runs[level] = got.runs;
    next += got.runs;
  }
  return { medianMs: median(seq.samples), p99Ms: percentile(seq.samples, 99), perSec, runs };
}

/** Measure every shape of one engine (one cell for a limit), in a fresh directory and database. */
export async function measureEngine(spec: EngineSpec, sizes: PeerSizes): Promise<Cell[]> {
  const shapes: (Shape | null)[] = spec.kind === 'limit' ? [null] : [...SHAPES];
  return withTarget(spec, (target) =>
    withEngine(spec, target, async (engine) => {
      const cells: Cell[] = [];
      for (const shape of shapes) {
        const run = await engine.prepare(shape ?? 0);
        const measured = await measureCell(run, sizes);
        const { name: engineName, kind, store } = spec;
        cells.push({ engine: engineName, kind, store, shape, rowsPerRun: spec.rowsPerRun ?? 1, ...measured });
        console.error(`bench: peers: ${spec.name}${shape === null ? '' : `, ${shape} steps`} done`);
      }
      return cells;
    }),
  );
}

/** Measure every engine in turn. */
export async function peers(specs: readonly EngineSpec[], sizes: PeerSizes): Promise<Cell[]> {
  const cells: Cell[] = [];
  for (const spec of specs) cells.push(...(await measureEngine(spec, sizes)));
  return cells;
}
