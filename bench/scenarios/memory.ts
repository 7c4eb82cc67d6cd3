/**
 * Memory of suspended executions (issues #8, #26): RSS and heap of a fresh process holding Skein on
 * SQLite, before and after starting N executions that sleep for an hour, measured after GC.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Row } from '../report.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

interface ChildReport {
  count: number;
  half: number;
  suspended: number;
  gc: boolean;
  before: NodeJS.MemoryUsage;
  sleeping: NodeJS.MemoryUsage;
  after: NodeJS.MemoryUsage;
  loadBefore: number;
  loadAfter: number;
  loadAfterWarm: number;
}

function runChild(count: number): Promise<ChildReport> {
  const child = spawn(
    process.execPath,
    [
      '--expose-gc',
      '--import',
      'tsx',
      fileURLToPath(new URL('./memory-child.ts', import.meta.url)),
      String(count),
    ],
    {
      cwd: root,
      // The mode the bench runs in (src or dist, bench/main.mjs) carries over through TSX_TSCONFIG_PATH.
      env: { TSX_TSCONFIG_PATH: `${root}tsconfig.json`, ...process.env },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`bench: memory child exited with ${code}`));
      else resolve(JSON.parse(out.trim().split('\n').at(-1)!) as ChildReport);
    });
  });
}

const MiB = 2 ** 20;

/** Heap target per suspended execution (issue #26). */
const HEAP_TARGET = 1024;

/** Start `count` suspended executions (half sleeping, half waiting for a signal) in a fresh process; return its memory rows. */
export async function memory(count: number): Promise<Row[]> {
  const r = await runChild(count);
  if (r.suspended !== count) throw new Error(`bench: ${r.suspended} of ${count} executions suspended`);
  const note = r.gc ? 'after GC' : 'no --expose-gc';
  const waiting = count - r.half;
  const heapEach = (r.after.heapUsed - r.before.heapUsed) / count;
  return [
    { metric: `RSS before, Skein on SQLite, idle (${note})`, value: r.before.rss / MiB, unit: 'MiB' },
    { metric: `RSS with ${count} suspended executions (${note})`, value: r.after.rss / MiB, unit: 'MiB' },
    {
      metric: 'RSS growth per suspended execution',
      value: (r.after.rss - r.before.rss) / count,
      unit: 'bytes',
    },
    {
      metric: 'JS heap used growth per suspended execution',
      value: heapEach,
      unit: 'bytes',
      target: `<= ${HEAP_TARGET}`,
      met: heapEach <= HEAP_TARGET,
    },
    {
      metric: `  of which per sleeping execution (first ${r.half})`,
      value: (r.sleeping.heapUsed - r.before.heapUsed) / r.half,
      unit: 'bytes',
    },
    {
      metric: `  of which per execution waiting for a signal (next ${waiting})`,
      value: (r.after.heapUsed - r.sleeping.heapUsed) / waiting,
      unit: 'bytes',
    },
    {
      metric: 'JS heap external + array buffers growth per suspended execution',
      value: (r.after.external - r.before.external) / count,
      unit: 'bytes',
    },
    { metric: 'loadState of one suspended execution, before, median', value: r.loadBefore, unit: 'ms' },
    {
      metric: `loadState of one suspended execution, with ${count} suspended, median`,
      value: r.loadAfter,
      unit: 'ms',
      baseline: { name: 'before', value: r.loadBefore },
    },
    {
      metric: `loadState of the same executions as before, with ${count} suspended, median`,
      value: r.loadAfterWarm,
      unit: 'ms',
      baseline: { name: 'before', value: r.loadBefore },
    },
  ];
}
