/**
 * The built packages against their TypeScript sources, in the same run (adr/0038): the same
 * child script (build-child.mjs) times a SQLite step, (T10 - T0) / 10 in wall and CPU time, at
 * `full` and `normal`, run three ways — plain `node` on `dist` (what an application runs), tsx
 * on `dist` (the bench's default: tsx runs only the bench's own code) and tsx on `src` (the
 * root tsconfig's paths, `pnpm bench --src`) — in interleaved rounds, the order rotating, so a
 * burst of load from elsewhere falls on all three.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { median } from '../measure.js';
import type { Row } from '../report.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const child = fileURLToPath(new URL('./build-child.mjs', import.meta.url));

type Mode = 'node dist' | 'tsx dist' | 'tsx src';
const MODES: readonly Mode[] = ['node dist', 'tsx dist', 'tsx src'];

interface ChildReport {
  resolved: string;
  wallPerStepUs: number;
  cpuPerStepUs: number;
}

export interface BuildSizes {
  rounds: number;
  /** Runs of each shape per child. */
  runs: number;
}
export const buildFullSizes: BuildSizes = { rounds: 5, runs: 400 };
export const buildSmokeSizes: BuildSizes = { rounds: 1, runs: 50 };

function runChild(mode: Mode, durability: 'full' | 'normal', runs: number): Promise<ChildReport> {
  const tsx = mode !== 'node dist';
  const tsconfig = mode === 'tsx src' ? `${root}tsconfig.json` : `${root}bench/tsconfig.dist.json`;
  const args = [...(tsx ? ['--import', 'tsx'] : []), child, durability, String(runs)];
  const proc = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, TSX_TSCONFIG_PATH: tsconfig },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  proc.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    proc.once('error', reject);
    proc.once('exit', (code) => {
      if (code !== 0)
        return reject(new Error(`bench: build child (${mode}, ${durability}) exited with ${code}`));
      const report = JSON.parse(out.trim().split('\n').at(-1)!) as ChildReport;
      const expected = mode === 'tsx src' ? '/src/index.ts' : '/dist/index.js';
      if (!report.resolved.endsWith(expected)) {
        return reject(new Error(`bench: build child (${mode}) loaded ${report.resolved}, not …${expected}`));
      }
      resolve(report);
    });
  });
}

/** Per-step cost of `dist` and `src` in interleaved rounds; medians over the rounds. */
export async function buildVsSrc(sizes: BuildSizes): Promise<Row[]> {
  const rows: Row[] = [];
  for (const durability of ['full', 'normal'] as const) {
    const got = new Map<Mode, ChildReport[]>(MODES.map((mode) => [mode, []]));
    for (let round = 0; round < sizes.rounds; round++) {
      for (let j = 0; j < MODES.length; j++) {
        const mode = MODES[(j + round) % MODES.length]!;
        got.get(mode)!.push(await runChild(mode, durability, sizes.runs));
      }
      console.error(`bench: build: ${durability}, round ${round + 1}/${sizes.rounds} done`);
    }
    const wall = (mode: Mode) => median(got.get(mode)!.map((r) => r.wallPerStepUs));
    const cpu = (mode: Mode) => median(got.get(mode)!.map((r) => r.cpuPerStepUs));
    for (const mode of MODES) {
      const baseline = mode === 'tsx src' ? {} : { baseline: { name: 'tsx src', value: wall('tsx src') } };
      rows.push({
        metric: `${durability}: per step (T10 - T0) / 10, wall, ${mode}`,
        value: wall(mode),
        unit: 'µs',
        ...baseline,
      });
    }
    for (const mode of MODES) {
      const baseline = mode === 'tsx src' ? {} : { baseline: { name: 'tsx src', value: cpu('tsx src') } };
      rows.push({
        metric: `${durability}: per step (T10 - T0) / 10, CPU, ${mode}`,
        value: cpu(mode),
        unit: 'µs',
        ...baseline,
      });
    }
  }
  return rows;
}
