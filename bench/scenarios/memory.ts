/**
 * Memory of suspended executions (issue #8): RSS and heap of a fresh process holding Skein on
 * SQLite, before and after starting N executions that sleep for an hour, measured after GC.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Row } from '../report.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

interface ChildReport {
  count: number;
  suspended: number;
  gc: boolean;
  before: NodeJS.MemoryUsage;
  after: NodeJS.MemoryUsage;
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

/** Start `count` sleeping executions in a fresh process; return its memory rows. */
export async function memory(count: number): Promise<Row[]> {
  const r = await runChild(count);
  if (r.suspended !== count) throw new Error(`bench: ${r.suspended} of ${count} executions suspended`);
  const note = r.gc ? 'after GC' : 'no --expose-gc';
  return [
    { metric: `RSS before, Skein on SQLite, idle (${note})`, value: r.before.rss / MiB, unit: 'MiB' },
    { metric: `RSS with ${count} suspended executions (${note})`, value: r.after.rss / MiB, unit: 'MiB' },
    {
      metric: `RSS growth per suspended execution`,
      value: (r.after.rss - r.before.rss) / count,
      unit: 'bytes',
    },
    {
      metric: `JS heap used growth per suspended execution`,
      value: (r.after.heapUsed - r.before.heapUsed) / count,
      unit: 'bytes',
    },
  ];
}
