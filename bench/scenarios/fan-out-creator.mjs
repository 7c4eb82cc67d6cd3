/**
 * Child process of the fan-out bench's creator-memory rows: creates one fan-out of argv[3] items
 * (chunk size 100, no workers) on SQLite (`sqlite`, a fresh file) or PostgreSQL (`postgres
 * <schema>`), as an application's creator process would, and prints one JSON line: the peak
 * RSS of the process (the kernel's high-water mark of its memory, so nothing between two
 * samples is missed: `VmHWM` of /proc/self/status; not `resourceUsage().maxRSS`, which on Linux
 * keeps the RSS of the parent that spawned the process, the bench's own), the RSS
 * once the packages are loaded and the stores open, the V8 heap's peak as sampled at each
 * page the source is asked for, and the creation's milliseconds.
 *
 * Plain JavaScript, run by plain `node`: it loads the built packages (`dist`) and no loader,
 * as an application does.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPostgresStores } from '@skein/store-postgres';
import { openSqliteStores } from '@skein/store-sqlite';
import { defineTask } from '@skein/workflow-runtime';
import { createFanOut } from '@skein/workflow-runtime/internal';
import { z } from 'zod';

const [mode, count, schema] = process.argv.slice(2);
const total = Number(count);
const PG_URL = process.env.SKEIN_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const MB = 1024 * 1024;

const trivial = defineTask({
  name: 'trivial',
  input: z.object({ i: z.number().int() }),
  async run(input) {
    return { score: input.i };
  },
});

/** This process's peak RSS in MB: `VmHWM` (kB) where /proc has it, else the kernel's `maxRSS`. */
function highWaterMb() {
  const status = '/proc/self/status';
  const kb = existsSync(status) ? /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(status, 'utf8'))?.[1] : undefined;
  return ((kb === undefined ? process.resourceUsage().maxRSS : Number(kb)) * 1024) / MB;
}

const dir = mkdtempSync(join(tmpdir(), 'skein-bench-fanout-creator-'));
const stores =
  mode === 'postgres'
    ? await openPostgresStores({ url: PG_URL, schema, poolSize: 8 })
    : openSqliteStores({ path: join(dir, 'bench.db'), durability: 'normal' });
const loaded = process.memoryUsage().rss;
let heapPeak = 0;
const source = (from, limit) => {
  heapPeak = Math.max(heapPeak, process.memoryUsage().heapTotal);
  return Array.from({ length: Math.max(0, Math.min(limit, total - from)) }, (_, k) => ({ i: from + k }));
};
const start = performance.now();
await createFanOut({
  home: stores.fanOuts,
  shards: { main: stores.fanOuts },
  plan: {
    fanOutId: `rss-${total}`,
    executionId: `bench-rss-${total}`,
    name: 'cases',
    task: trivial.name,
    taskVersion: trivial.version,
    chunkSize: 100,
    shards: ['main'],
    required: true,
    maxAttempts: 3,
  },
  task: trivial,
  items: source,
  owner: 'bench',
});
const ms = performance.now() - start;
heapPeak = Math.max(heapPeak, process.memoryUsage().heapTotal);
const peakRss = highWaterMb();
await stores.close();
rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify({ peakRss, loadedRss: loaded / MB, heapPeak: heapPeak / MB, ms }));
