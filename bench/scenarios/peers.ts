/**
 * Skein side by side with its peers (issue #8): the same workflow shapes (0, 1, 3 and 10 steps)
 * on every engine in one run — Skein on SQLite (full, normal) and PostgreSQL, DBOS Transact on
 * the same PostgreSQL server, and the raw commits that bound them — measuring sequential latency
 * (median, p99) and throughput at concurrency 1, 10, 50 and 100.
 *
 * Every engine is open for the whole scenario and the measurements are taken in rounds: each
 * round visits every shape and, for each, measures every engine in turn (the order rotating),
 * so a burst of load from elsewhere on a shared machine falls on all of them rather than on one,
 * and an engine's cells of different shapes are measured close together. Latency samples are
 * pooled over the rounds; a throughput is the median of its rounds. A limit has no shape: it is
 * measured in every round of every shape, at a quarter of the budget, and pooled into one row.
 */
import type { Engine, EngineSpec, Runner } from '../engines/engine.js';
import { SHAPES, type Shape } from '../engines/engine.js';
import { withEngine, withTarget } from '../engines/lifecycle.js';
import { median, percentile } from '../measure.js';
import { type Budget, timedSequential, timedThroughput } from '../timed.js';

/** Loop sizes of the scenario. */
export interface PeerSizes {
  /** Runs before the first measurement of each engine and shape. */
  warmup: number;
  /** Rounds over the engines, per shape. */
  rounds: number;
  /** Budget of the sequential loop, per round. */
  sequential: Budget;
  /** Budget of each concurrent loop, per round. */
  concurrent: Budget;
  /** Concurrency levels above 1. */
  levels: readonly number[];
}

export const peersFullSizes: PeerSizes = {
  warmup: 20,
  rounds: 3,
  sequential: { seconds: 0.5, minRuns: 30, maxRuns: 2000 },
  concurrent: { seconds: 0.5, minRuns: 200, maxRuns: 20_000 },
  levels: [10, 50, 100],
};
export const peersSmokeSizes: PeerSizes = {
  warmup: 2,
  rounds: 1,
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

/** What the rounds of one engine and shape have gathered. */
class Tally {
  next = 0;
  readonly samples: number[] = [];
  seqMs = 0;
  readonly rates = new Map<number, number[]>();
  readonly runs = new Map<number, number>();

  constructor(readonly run: Runner) {}

  cell(spec: EngineSpec, shape: Shape | null): Cell {
    const perSec: Record<number, number> = { 1: this.samples.length / (this.seqMs / 1000) };
    const runs: Record<number, number> = { 1: this.samples.length };
    for (const [level, rates] of this.rates) perSec[level] = median(rates);
    for (const [level, count] of this.runs) runs[level] = count;
    const { name: engine, kind, store } = spec;
    const p99Ms = percentile(this.samples, 99);
    return {
      engine,
      kind,
      store,
      shape,
      rowsPerRun: spec.rowsPerRun ?? 1,
      medianMs: median(this.samples),
      p99Ms,
      perSec,
      runs,
    };
  }
}

const scaled = (budget: Budget, by: number): Budget => ({ ...budget, seconds: budget.seconds * by });

/** One round of one engine and shape: warm up the first time, then the sequential and concurrent loops. */
async function measureRound(tally: Tally, sizes: PeerSizes, share: number): Promise<void> {
  if (tally.next === 0) for (; tally.next < sizes.warmup; tally.next++) await tally.run(tally.next);
  const base = tally.next;
  const seq = await timedSequential(scaled(sizes.sequential, share), (i) => tally.run(base + i));
  tally.next += seq.samples.length;
  tally.samples.push(...seq.samples);
  tally.seqMs += (seq.samples.length / seq.perSec) * 1000;
  for (const level of sizes.levels) {
    const got = await timedThroughput(scaled(sizes.concurrent, share), level, tally.next, tally.run);
    tally.next += got.runs;
    tally.rates.set(level, [...(tally.rates.get(level) ?? []), got.perSec]);
    tally.runs.set(level, (tally.runs.get(level) ?? 0) + got.runs);
  }
}

/** Open every engine (each in its own directory and database), run `fn`, close them all. */
function withAll<T>(specs: readonly EngineSpec[], fn: (engines: Engine[]) => Promise<T>): Promise<T> {
  const open = (i: number, engines: Engine[]): Promise<T> => {
    const spec = specs[i];
    if (spec === undefined) return fn(engines);
    return withTarget(spec, (target) =>
      withEngine(spec, target, (engine) => open(i + 1, [...engines, engine])),
    );
  };
  return open(0, []);
}

/** Measure every engine on every shape (a limit once), in interleaved rounds. */
export async function peers(specs: readonly EngineSpec[], sizes: PeerSizes): Promise<Cell[]> {
  return withAll(specs, async (engines) => {
    const limits = new Map<number, Tally>();
    const tallies = new Map<string, Tally>();
    for (const [k, spec] of specs.entries()) {
      if (spec.kind === 'limit') limits.set(k, new Tally(await engines[k]!.prepare(0)));
      else
        for (const shape of SHAPES) tallies.set(`${k}/${shape}`, new Tally(await engines[k]!.prepare(shape)));
    }
    // Every round visits every shape, so an engine's 0-step and n-step cells (whose difference
    // is the per-step cost) are measured seconds apart, not a whole phase of the run apart.
    for (let round = 0; round < sizes.rounds; round++) {
      for (const shape of SHAPES) {
        for (let j = 0; j < specs.length; j++) {
          const k = (j + round) % specs.length;
          const limit = limits.get(k);
          if (limit !== undefined) await measureRound(limit, sizes, 1 / SHAPES.length);
          else await measureRound(tallies.get(`${k}/${shape}`)!, sizes, 1);
        }
        console.error(`bench: peers: round ${round + 1}/${sizes.rounds}, ${shape} steps done`);
      }
    }
    return specs.flatMap((spec, k) =>
      spec.kind === 'limit'
        ? [limits.get(k)!.cell(spec, null)]
        : SHAPES.map((shape) => tallies.get(`${k}/${shape}`)!.cell(spec, shape)),
    );
  });
}
