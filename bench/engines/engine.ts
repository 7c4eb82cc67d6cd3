/**
 * The common face of everything the peer benchmark runs — Skein, DBOS and the raw commits that
 * bound them — so the timing loops are written once and each engine file stays short.
 */

/** Workflow shapes, by number of steps. */
export const SHAPES = [0, 1, 3, 10] as const;
export type Shape = (typeof SHAPES)[number];

/** Runs execution number `i` of a prepared shape to its end; rejects on a wrong result. */
export type Runner = (i: number) => Promise<void>;

/** Which system an engine is, for the ratio columns. */
export type EngineKind = 'skein' | 'dbos' | 'restate' | 'limit';

/** An opened engine: `prepare(shape)` once per shape, then `run(i)` many times, then `close()`. */
export interface Engine {
  /** Get ready to run workflows of `shape` steps (a limit ignores the shape). */
  prepare(shape: Shape): Promise<Runner>;
  /** Close every connection and file the engine opened (the database it was given stays). */
  close(): Promise<void>;
}

/** Where an engine keeps its state, handed to `open`. */
export interface EngineTarget {
  /** A fresh temp directory (SQLite engines put their file here). */
  dir: string;
  /** URL of a fresh, empty PostgreSQL database (PostgreSQL engines only). */
  pgUrl?: string;
}

/** One engine of the benchmark: how to open it and how to label its rows. */
export interface EngineSpec {
  /** Row label, e.g. `skein sqlite full`. */
  name: string;
  kind: EngineKind;
  /** The store it writes to; a Skein row is compared with the limit of the same store. */
  store: 'sqlite-full' | 'sqlite-normal' | 'postgres' | 'restate';
  /** Rows one run commits (limits only: 1 for a single-row commit, 100 for a batch; default: 1). */
  rowsPerRun?: number;
  /** Filter tags for `--only`. */
  tags: readonly string[];
  open(target: EngineTarget): Promise<Engine>;
}

/** Throw if an engine returned something other than `expected`: a bench that measures errors is no bench. */
export function expectResult(engine: string, i: number, got: unknown, expected: number): void {
  if (got !== expected) {
    throw new Error(`bench: ${engine} run ${i} returned ${String(got)}, expected ${expected}`);
  }
}
