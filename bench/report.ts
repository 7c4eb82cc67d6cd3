/** Bench results: printed as a markdown table and written to bench/results/<suite>.json. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { arch, cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';

/** One row of a results table. */
export interface Row {
  metric: string;
  value: number;
  unit: string;
  /** What the value is compared with, e.g. the raw commit. */
  baseline?: { name: string; value: number };
  /** The target, e.g. `<= 1.5x`. */
  target?: string;
  /** Whether the target is met (absent when there is no target). */
  met?: boolean;
}

const fmt = (n: number) =>
  Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 10 ? n.toFixed(1) : n.toFixed(3);

/** Print `rows` as a markdown table and write them as JSON. */
export function report(suite: string, rows: Row[], meta: Record<string, unknown>): void {
  console.log(`\n### ${suite}\n`);
  console.log('| metric | value | baseline | ratio | target | met |');
  console.log('| --- | ---: | --- | ---: | --- | --- |');
  for (const row of rows) {
    const ratio = row.baseline === undefined ? '' : `${(row.value / row.baseline.value).toFixed(2)}x`;
    const baseline =
      row.baseline === undefined ? '' : `${row.baseline.name}: ${fmt(row.baseline.value)} ${row.unit}`;
    const met = row.met === undefined ? '' : row.met ? 'yes' : 'NO';
    console.log(
      `| ${row.metric} | ${fmt(row.value)} ${row.unit} | ${baseline} | ${ratio} | ${row.target ?? ''} | ${met} |`,
    );
  }
  saveResults(suite, { meta, rows });
}

/** Write `data` (with the time and the machine) to bench/results/<suite>.json. */
export function saveResults(suite: string, data: Record<string, unknown>): void {
  const dir = fileURLToPath(new URL('./results/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  const machine = {
    node: process.version,
    arch: arch(),
    cpus: cpus().length,
    cpu: cpus()[0]?.model,
    memGiB: Math.round(totalmem() / 2 ** 30),
  };
  writeFileSync(
    `${dir}${suite}.json`,
    `${JSON.stringify({ suite, at: new Date().toISOString(), machine, ...data }, null, 2)}\n`,
  );
}
