/**
 * Child process of the memory scenario (run with `node --expose-gc --import tsx`): opens Skein on
 * a SQLite file, measures the process after GC, starts `count` executions that each sleep for an
 * hour (so they end suspended), measures again, and prints one JSON line on stdout.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStores } from '@skein/store-sqlite';
import { createRuntime, defineWorkflow } from '@skein/workflow-runtime';
import { z } from 'zod';
import { throughput } from '../measure.js';

const nap = defineWorkflow({
  name: 'nap',
  input: z.object({ n: z.number() }),
  async run(ctx, { n }) {
    await ctx.sleep('an-hour', 3_600_000);
    return n;
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

const count = Number(process.argv[2] ?? 10_000);
const dir = mkdtempSync(join(tmpdir(), 'skein-bench-memory-'));
const stores = openSqliteStores({ path: join(dir, 'bench.db'), durability: 'normal' });
const runtime = createRuntime({ stores, workflows: [nap] });
try {
  for (let i = 0; i < 20; i++)
    await runtime.execute({ executionId: `warm-${i}`, workflow: 'nap', input: { n: i } });
  const before = await settled();
  let suspended = 0;
  await throughput(count, 100, async (i) => {
    const state = await runtime.execute({ executionId: `nap-${i}`, workflow: 'nap', input: { n: i } });
    if (state.status === 'suspended') suspended++;
  });
  const after = await settled();
  console.log(JSON.stringify({ count, suspended, gc: gc !== undefined, before, after }));
} finally {
  await runtime.close();
  await stores.close();
  rmSync(dir, { recursive: true, force: true });
}
