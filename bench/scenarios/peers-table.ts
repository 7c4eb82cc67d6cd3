/**
 * The peer table: one row per engine and shape with its latency and throughput, and the ratios
 * Skein ÷ DBOS and Skein ÷ limit; then the targets as report rows (met / NO).
 */
import type { Row } from '../report.js';
import type { Cell } from './peers.js';

const LEVELS = [1, 10, 50, 100] as const;

const num = (n: number | undefined) =>
  n === undefined || Number.isNaN(n) ? '' : n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2);
const ratio = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined ? '' : `${(a / b).toFixed(2)}x`;

function find(cells: readonly Cell[], match: Partial<Cell>): Cell | undefined {
  return cells.find((c) => Object.entries(match).every(([k, v]) => c[k as keyof Cell] === v));
}

/** The single-row commit that bounds a store: its latency, and its rate at `level` (pg: 8 connections). */
function limitFor(cells: readonly Cell[], store: Cell['store'], forRate: boolean): Cell | undefined {
  if (store === 'postgres') {
    return find(cells, { engine: forRate ? 'raw pg, 1-row commit, 8 conn' : 'raw pg, 1-row commit, 1 conn' });
  }
  return find(cells, { kind: 'limit', store, rowsPerRun: 1 });
}

function rowOf(cell: Cell, cells: readonly Cell[]): string {
  const rates = LEVELS.map((level) => num((cell.perSec[level] ?? Number.NaN) * cell.rowsPerRun));
  const cols = [
    cell.engine,
    cell.shape === null ? '—' : String(cell.shape),
    num(cell.medianMs),
    num(cell.p99Ms),
  ];
  if (cell.kind !== 'skein') return `| ${[...cols, ...rates, '', '', '', '', '', ''].join(' | ')} |`;
  const dbos = find(cells, { kind: 'dbos', shape: cell.shape });
  const restate = find(cells, { kind: 'restate', shape: cell.shape });
  const latencyLimit = limitFor(cells, cell.store, false);
  const rateLimit = limitFor(cells, cell.store, true);
  return `| ${[
    ...cols,
    ...rates,
    ratio(cell.medianMs, dbos?.medianMs),
    ratio(cell.perSec[50], dbos?.perSec[50]),
    ratio(cell.medianMs, restate?.medianMs),
    ratio(cell.perSec[50], restate?.perSec[50]),
    ratio(cell.medianMs, latencyLimit?.medianMs),
    ratio(cell.perSec[50], rateLimit?.perSec[50]),
  ].join(' | ')} |`;
}

/** The markdown table of every cell. */
export function peerTable(cells: readonly Cell[]): string {
  return [
    '| engine | steps | median ms | p99 ms | /s c1 | /s c10 | /s c50 | /s c100 | median ÷ DBOS | c50 ÷ DBOS | median ÷ Restate | c50 ÷ Restate | median ÷ limit | c50 ÷ limit |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...cells.map((cell) => rowOf(cell, cells)),
  ].join('\n');
}

/** Marginal cost of one more step: (T(n) - T(0)) / n on the median latencies of one engine. */
function perStep(cells: readonly Cell[], engine: string, n: 3 | 10): number | undefined {
  const tn = find(cells, { engine, shape: n })?.medianMs;
  const t0 = find(cells, { engine, shape: 0 })?.medianMs;
  return tn === undefined || t0 === undefined ? undefined : (tn - t0) / n;
}

/**
 * The SQLite per-step rows. The target (≤ 1.5× the raw commit) is judged at `full`, the
 * default, where a commit is durable; at `normal` the raw commit is ~10–20 µs of CPU and no
 * flush, so its row is reported without a target (see adr/0017).
 */
function sqliteTargets(cells: readonly Cell[], durability: 'full' | 'normal'): Row[] {
  const raw = limitFor(cells, durability === 'full' ? 'sqlite-full' : 'sqlite-normal', false);
  const rows: Row[] = [];
  for (const n of [3, 10] as const) {
    const value = perStep(cells, `skein sqlite ${durability}`, n);
    if (value === undefined || raw === undefined) continue;
    rows.push({
      metric: `skein sqlite ${durability}: per-step overhead, (T${n} - T0) / ${n}`,
      value,
      unit: 'ms',
      baseline: { name: `raw 1-row commit (${durability})`, value: raw.medianMs },
      ...(durability === 'full' ? { target: '<= 1.5x raw', met: value <= 1.5 * raw.medianMs } : {}),
    });
  }
  return rows;
}

function postgresTargets(cells: readonly Cell[]): Row[] {
  const skein = find(cells, { engine: 'skein postgres', shape: 3 });
  const dbos = find(cells, { kind: 'dbos', shape: 3 });
  if (skein === undefined || dbos === undefined) return [];
  return [
    {
      metric: 'skein postgres: 3-step sequential latency, median',
      value: skein.medianMs,
      unit: 'ms',
      baseline: { name: 'DBOS', value: dbos.medianMs },
      target: '<= 0.3x DBOS',
      met: skein.medianMs <= 0.3 * dbos.medianMs,
    },
    {
      metric: 'skein postgres: 3-step workflows/s at concurrency 50',
      value: skein.perSec[50]!,
      unit: 'wf/s',
      baseline: { name: 'DBOS', value: dbos.perSec[50]! },
      target: '>= 4x DBOS',
      met: skein.perSec[50]! >= 4 * dbos.perSec[50]!,
    },
  ];
}

/** Skein's 3-step rows against Restate in the same run (no target: a comparison). */
function restateRows(cells: readonly Cell[]): Row[] {
  const restate = find(cells, { kind: 'restate', shape: 3 });
  if (restate === undefined) return [];
  const baseline = (value: number) => ({ name: 'Restate', value });
  return ['skein postgres', 'skein sqlite full'].flatMap((engine) => {
    const skein = find(cells, { engine, shape: 3 });
    if (skein === undefined) return [];
    return [
      {
        metric: `${engine}: 3-step sequential latency, median`,
        value: skein.medianMs,
        unit: 'ms',
        baseline: baseline(restate.medianMs),
      },
      {
        metric: `${engine}: 3-step workflows/s at concurrency 50`,
        value: skein.perSec[50]!,
        unit: 'wf/s',
        baseline: baseline(restate.perSec[50]!),
      },
    ];
  });
}

/** The targets, each with its baseline from the same run, then the rows against Restate. */
export function peerTargets(cells: readonly Cell[]): Row[] {
  return [
    ...postgresTargets(cells),
    ...sqliteTargets(cells, 'full'),
    ...sqliteTargets(cells, 'normal'),
    ...restateRows(cells),
  ];
}
