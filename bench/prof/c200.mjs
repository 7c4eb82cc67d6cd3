/**
 * A focused loop for profiling (adr/0097): executions of an n-step workflow at a concurrency,
 * through the built packages (run `pnpm build` first), as sqlite-rounds.ts's c200 target does.
 * Prints [executions/s, CPU µs per execution] for each round (the first one warms up).
 * Usage: node bench/prof/c200.mjs [rounds=5] [executions=20000] [durability=normal]
 *          [concurrency=200] [steps=1]
 * e.g. `node --cpu-prof bench/prof/c200.mjs 3` for a CPU profile.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStores } from '@skein/store-sqlite';
import { createRuntime, defineWorkflow } from '@skein/workflow-runtime';
import { z } from 'zod';

const rounds = Number(process.argv[2] ?? 5);
const count = Number(process.argv[3] ?? 20000);
const durability = process.argv[4] ?? 'normal';
const conc = Number(process.argv[5] ?? 200);
const steps = Number(process.argv[6] ?? 1);
const one = defineWorkflow({
  name: 'one',
  input: z.object({ n: z.number() }),
  async run(ctx, { n }) {
    let t = n;
    for (let i = 0; i < steps; i++) t = await ctx.step(`s${i}`, () => t + 1);
    return t;
  },
});
const dir = mkdtempSync(join(tmpdir(), 'skein-prof-'));
const stores = openSqliteStores({ path: join(dir, 'p.db'), durability });
const runtime = createRuntime({ stores, workflows: [one] });
const out = [];
for (let r = 0; r < rounds; r++) {
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const i = next++;
      await runtime.execute({ executionId: `r${r}-${i}`, workflow: 'one', input: { n: i } });
    }
  };
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: conc }, lane));
  const ms = performance.now() - t0;
  const u = process.cpuUsage(cpu);
  out.push([Math.round(count / (ms / 1000)), ((u.user + u.system) / count).toFixed(1)]);
}
console.log(JSON.stringify(out));
await runtime.close();
await stores.close();
rmSync(dir, { recursive: true, force: true });
