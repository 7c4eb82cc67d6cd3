/**
 * Child process of the `build` scenario. Plain JavaScript, so the same file runs under plain
 * `node` (the built packages, no loader at all) and under tsx (the built packages, or the
 * TypeScript sources through the root tsconfig's paths). Opens Skein on a fresh SQLite file at
 * the durability in argv[2], warms up, then times 0-step and 10-step workflows in turns of 50,
 * wall and CPU time per run, and prints one JSON line with the medians and the file that
 * `@skein/workflow-runtime` resolved to.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStores } from '@skein/store-sqlite';
import { createRuntime, defineWorkflow } from '@skein/workflow-runtime';
import { z } from 'zod';

const durability = process.argv[2] === 'full' ? 'full' : 'normal';
const runs = Number(process.argv[3] ?? 1000);
const input = z.object({ n: z.number() });
const steps = (count) =>
  defineWorkflow({
    name: `build-steps-${count}`,
    input,
    async run(ctx, { n }) {
      let total = n;
      for (let i = 0; i < count; i++) total = await ctx.step(`s${i}`, () => total + 1);
      return total;
    },
  });
const zero = steps(0);
const ten = steps(10);

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
const median = (samples) => [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)];

const dir = mkdtempSync(join(tmpdir(), 'skein-bench-build-'));
const stores = openSqliteStores({ path: join(dir, 'bench.db'), durability });
const runtime = createRuntime({ stores, workflows: [zero, ten] });
try {
  const one = async (workflow, id) => {
    const wall = nowMs();
    const cpu = process.cpuUsage();
    const state = await runtime.execute({ executionId: id, workflow: workflow.name, input: { n: 1 } });
    const used = process.cpuUsage(cpu);
    if (state.status !== 'completed') throw new Error(`bench: ${id} ended ${state.status}`);
    return { wall: nowMs() - wall, cpu: (used.user + used.system) / 1000 };
  };
  for (let i = 0; i < Math.max(50, runs / 5); i++) await one(ten, `warm-${i}`);
  const got = { zero: { wall: [], cpu: [] }, ten: { wall: [], cpu: [] } };
  for (let done = 0; done < runs; done += 50) {
    for (const [key, workflow] of [
      ['zero', zero],
      ['ten', ten],
    ]) {
      for (let i = 0; i < Math.min(50, runs - done); i++) {
        const sample = await one(workflow, `${key}-${done + i}`);
        got[key].wall.push(sample.wall);
        got[key].cpu.push(sample.cpu);
      }
    }
  }
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log(
    JSON.stringify({
      resolved: import.meta.resolve('@skein/workflow-runtime'),
      durability,
      runs,
      // (T10 - T0) / 10 in µs, on medians of wall time and on means of CPU time per run.
      wallPerStepUs: ((median(got.ten.wall) - median(got.zero.wall)) / 10) * 1000,
      cpuPerStepUs: ((mean(got.ten.cpu) - mean(got.zero.cpu)) / 10) * 1000,
    }),
  );
} finally {
  await runtime.close();
  await stores.close();
  rmSync(dir, { recursive: true, force: true });
}
