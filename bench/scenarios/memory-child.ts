/**
 * Child process of the memory scenario (run with `node --expose-gc --import tsx`): opens Skein
 * on a SQLite file (`normal`), measures the process after GC, then starts `count` executions
 * that suspend — the first half sleeping for an hour (each one an in-process wake-up timer),
 * the second half waiting for a signal (nothing in process) — measuring after each half. It
 * times `loadState` of suspended executions before (on the warm-up executions) and after (on
 * executions picked across all of them), and prints one JSON line on stdout.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStores } from '@skein/store-sqlite';
import { createRuntime, defineWorkflow, loadState } from '@skein/workflow-runtime';
import { z } from 'zod';
import { median, sequential, throughput } from '../measure.js';

const input = z.object({ n: z.number() });
const nap = defineWorkflow({
  name: 'nap',
  input,
  async run(ctx, { n }) {
    await ctx.sleep('an-hour', 3_600_000);
    return n;
  },
});
const wait = defineWorkflow({
  name: 'wait',
  input,
  signals: { go: z.number() },
  async run(ctx, { n }) {
    const go = await ctx.waitForSignal<number>('go');
    return n + go;
  },
});

const gc = (globalThis as { gc?: () => void }).gc;

async function settled(): Promise<NodeJS.MemoryUsage> {
  for (let i = 0; i < 3; i++) {
    gc?.();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return process.memoryUsage();
}

const count = Number(process.argv[2] ?? 100_000);
const half = Math.floor(count / 2);
const dir = mkdtempSync(join(tmpdir(), 'skein-bench-memory-'));
const stores = openSqliteStores({ path: join(dir, 'bench.db'), durability: 'normal' });
const runtime = createRuntime({ stores, workflows: [nap, wait] });
try {
  let suspended = 0;
  const start = (workflow: string, prefix: string) => async (i: number) => {
    const state = await runtime.execute({ executionId: `${prefix}-${i}`, workflow, input: { n: i } });
    if (state.status === 'suspended') suspended++;
  };
  await sequential(10, start('nap', 'warm-nap'));
  await sequential(10, start('wait', 'warm-wait'));
  const warm = Array.from({ length: 20 }, (_, i) => (i < 10 ? `warm-nap-${i}` : `warm-wait-${i - 10}`));
  const loads = 400;
  const timeLoads = (ids: (i: number) => string) =>
    sequential(loads, async (i) => {
      if ((await loadState(stores, ids(i))) === null) throw new Error(`bench: no state for ${ids(i)}`);
    });
  await timeLoads((i) => warm[i % 20]!); // warm-up of the read path
  const loadBefore = median(await timeLoads((i) => warm[i % 20]!));
  suspended = 0;
  const before = await settled();
  await throughput(half, 100, start('nap', 'nap'));
  const sleeping = await settled();
  await throughput(count - half, 100, start('wait', 'wait'));
  const after = await settled();
  // Executions spread over both halves (a stride prime to both), and the warm-up ones again.
  const picked = (i: number) =>
    i % 2 === 0 ? `nap-${(i * 7919) % half}` : `wait-${(i * 7919) % (count - half)}`;
  const loadAfter = median(await timeLoads(picked));
  const loadAfterWarm = median(await timeLoads((i) => warm[i % 20]!));
  console.log(
    JSON.stringify({
      count,
      half,
      suspended,
      gc: gc !== undefined,
      before,
      sleeping,
      after,
      loadBefore,
      loadAfter,
      loadAfterWarm,
    }),
  );
} finally {
  await runtime.close();
  await stores.close();
  rmSync(dir, { recursive: true, force: true });
}
