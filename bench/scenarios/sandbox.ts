/**
 * The sandbox (issue #19): one evaluator as a WebAssembly component in `SandboxPool` (QuickJS
 * inside Wasm, a fresh instance per invocation, with fuel, memory and log limits), next to the
 * same evaluator in `node:vm` (a fresh context per invocation: V8 isolation only, no limits
 * but a timeout) and in quickjs-emscripten (a fresh QuickJS context per invocation, in-thread).
 * Cold: a new pool's first invocation (the thread loads the component). Warm: a fresh instance
 * from the compiled modules the thread already holds, after `warmUp` unmeasured invocations
 * (V8 compiles hot guest code with its optimizing tier in the background); "in the thread" is
 * the part of it the worker thread spends (`run().endedAt - startedAt`), the rest is the hop
 * between threads. Every engine gets the same warm-up.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createContext, Script } from 'node:vm';
import { buildComponent, loadComponent, type SandboxComponent, SandboxPool } from '@skein/sandbox-wasm';
import { getQuickJS } from 'quickjs-emscripten';
import { median, nowMs, percentile, sequential, throughput } from '../measure.js';
import type { Row } from '../report.js';

/** Sample counts of a run. */
export interface SandboxSizes {
  cold: number;
  /** Invocations run first and not measured, while V8 tiers the guest's code up. */
  warmUp: number;
  warm: number;
  throughput: number;
}

export const sandboxFullSizes: SandboxSizes = { cold: 5, warmUp: 300, warm: 500, throughput: 2_000 };
export const sandboxSmokeSizes: SandboxSizes = { cold: 1, warmUp: 5, warm: 20, throughput: 40 };

const sourcePath = fileURLToPath(new URL('../sandbox/evaluator.js', import.meta.url));
const scriptSource = readFileSync(sourcePath, 'utf8').replace(/^export /m, '');
const LIMITS = {
  fuel: 50_000_000,
  memoryBytes: 32 << 20,
  timeoutMs: 2_000,
  maxLogs: 100,
  maxLogBytes: 16_384,
};
const TARGET_P50_MS = 5;
const TARGET_PER_SECOND = 300;

function inputFor(i: number): string {
  return JSON.stringify({ text: `case ${i}: the quick brown fox jumps over the lazy dog, again and again` });
}

/** The component, built once per source into bench/.tmp. */
async function component(): Promise<{
  evaluator: SandboxComponent;
  buildMs?: number;
  bytes: number;
  loadMs: number;
}> {
  const source = readFileSync(sourcePath);
  const key = createHash('sha256').update(source).digest('hex').slice(0, 16);
  const dir = fileURLToPath(new URL('../.tmp/', import.meta.url));
  const path = `${dir}sandbox-evaluator-${key}.wasm`;
  mkdirSync(dir, { recursive: true });
  let buildMs: number | undefined;
  if (!existsSync(path)) {
    const started = nowMs();
    await buildComponent({ source: sourcePath, out: `${path}.tmp` });
    renameSync(`${path}.tmp`, path);
    buildMs = nowMs() - started;
  }
  const bytes = readFileSync(path);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const started = nowMs();
  const evaluator = await loadComponent({ path, sha256 });
  return { evaluator, buildMs, bytes: bytes.byteLength, loadMs: nowMs() - started };
}

async function coldMs(evaluator: SandboxComponent, samples: number): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < samples; i++) {
    const pool = new SandboxPool({ size: 1 });
    try {
      await pool.ready();
      const started = nowMs();
      await pool.invoke(evaluator, inputFor(i), LIMITS);
      latencies.push(nowMs() - started);
    } finally {
      await pool.close();
    }
  }
  return latencies;
}

async function poolRows(evaluator: SandboxComponent, sizes: SandboxSizes): Promise<Row[]> {
  const rows: Row[] = [];
  const one = new SandboxPool({ size: 1 });
  try {
    await one.warm(evaluator);
    await sequential(sizes.warmUp, (i) => one.invoke(evaluator, inputFor(i), LIMITS));
    const inThread: number[] = [];
    const warm = await sequential(sizes.warm, async (i) => {
      const run = await one.run(evaluator, inputFor(i), LIMITS);
      inThread.push(run.endedAt - run.startedAt);
    });
    const p50 = median(warm);
    rows.push(
      {
        metric: 'sandbox-wasm warm invocation (fresh instance), p50',
        value: p50,
        unit: 'ms',
        target: `<= ${TARGET_P50_MS} ms`,
        met: p50 <= TARGET_P50_MS,
      },
      {
        metric: 'sandbox-wasm warm invocation (fresh instance), p99',
        value: percentile(warm, 99),
        unit: 'ms',
      },
      { metric: 'sandbox-wasm warm invocation, in the thread, p50', value: median(inThread), unit: 'ms' },
      {
        metric: 'sandbox-wasm invocations/s, pool size 1',
        value: await throughput(sizes.throughput, 2, (i) => one.invoke(evaluator, inputFor(i), LIMITS)),
        unit: '/s',
      },
    );
  } finally {
    await one.close();
  }
  const two = new SandboxPool({ size: 2 });
  try {
    await two.warm(evaluator);
    await throughput(sizes.warmUp, 4, (i) => two.invoke(evaluator, inputFor(i), LIMITS));
    const perSecond = await throughput(sizes.throughput, 4, (i) =>
      two.invoke(evaluator, inputFor(i), LIMITS),
    );
    rows.push({
      metric: 'sandbox-wasm invocations/s, pool size 2',
      value: perSecond,
      unit: '/s',
      target: `>= ${TARGET_PER_SECOND}/s`,
      met: perSecond >= TARGET_PER_SECOND,
    });
  } finally {
    await two.close();
  }
  return rows;
}

/** node:vm: a fresh context per invocation, the evaluator compiled once. */
async function vmRows(sizes: SandboxSizes): Promise<Row[]> {
  const script = new Script(`${scriptSource}\nevaluate(input);`);
  const run = (i: number) =>
    script.runInContext(createContext({ input: inputFor(i) }), { timeout: LIMITS.timeoutMs });
  await sequential(sizes.warmUp, run);
  const fresh = await sequential(sizes.warm, run);
  return [
    { metric: 'node:vm, fresh context per invocation, p50', value: median(fresh), unit: 'ms' },
    {
      metric: 'node:vm invocations/s, one thread',
      value: await throughput(sizes.throughput, 1, async (i) => run(i)),
      unit: '/s',
    },
  ];
}

/** quickjs-emscripten: a fresh QuickJS context per invocation, in this thread. */
async function quickjsRows(sizes: SandboxSizes): Promise<Row[]> {
  const QuickJS = await getQuickJS();
  const run = (i: number) => {
    const vm = QuickJS.newContext();
    try {
      vm.runtime.setMemoryLimit(LIMITS.memoryBytes);
      const result = vm.evalCode(`${scriptSource}\nevaluate(${JSON.stringify(inputFor(i))});`);
      return vm.dump(vm.unwrapResult(result)) as string;
    } finally {
      vm.dispose();
    }
  };
  await sequential(sizes.warmUp, run);
  const fresh = await sequential(sizes.warm, run);
  return [
    { metric: 'quickjs-emscripten, fresh context per invocation, p50', value: median(fresh), unit: 'ms' },
    {
      metric: 'quickjs-emscripten invocations/s, one thread',
      value: await throughput(sizes.throughput, 1, async (i) => run(i)),
      unit: '/s',
    },
  ];
}

/** Every row of the sandbox suite. */
export async function sandbox(sizes: SandboxSizes): Promise<Row[]> {
  const { evaluator, buildMs, bytes, loadMs } = await component();
  const rows: Row[] = [{ metric: 'component size (QuickJS backend)', value: bytes / 2 ** 20, unit: 'MiB' }];
  if (buildMs !== undefined) rows.push({ metric: 'buildComponent', value: buildMs, unit: 'ms' });
  rows.push({ metric: 'loadComponent (check, transpile, instrument, compile)', value: loadMs, unit: 'ms' });
  rows.push({
    metric: 'sandbox-wasm cold invocation (new pool), median',
    value: median(await coldMs(evaluator, sizes.cold)),
    unit: 'ms',
  });
  rows.push(...(await poolRows(evaluator, sizes)));
  rows.push(...(await vmRows(sizes)));
  rows.push(...(await quickjsRows(sizes)));
  return rows;
}
