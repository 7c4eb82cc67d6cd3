/**
 * Supervision costs on SQLite (issue #4): how long after a lease expires the execution is
 * resumed by a Supervisor, and the time of one `recoverAbandoned` pass over many executions.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStores } from '@skein/store-sqlite';
import { leaseExpired, Supervisor } from '@skein/worker-runtime-local';
import {
  createRuntime,
  defineWorkflow,
  type Runtime,
  recoverAbandoned,
  type Stores,
} from '@skein/workflow-runtime';
import { executionLeaseKey } from '@skein/workflow-runtime/internal';
import { z } from 'zod';
import { median, nowMs, percentile, throughput } from '../measure.js';
import type { Row } from '../report.js';

/** Counts of the scenario's loops. */
export interface SupervisionSizes {
  /** Executions whose lease expiry is timed, one at a time. */
  expiries: number;
  /** Executions in the recoverAbandoned pass. */
  pass: number;
  /** Of those, how many have an expired lease. */
  abandoned: number;
}

export const supervisionFullSizes: SupervisionSizes = { expiries: 20, pass: 10_000, abandoned: 100 };
export const supervisionSmokeSizes: SupervisionSizes = { expiries: 2, pass: 200, abandoned: 5 };

const TTL_MS = 200;
const TICK_MS = 50;
/** Executions whose first run hangs, as if its process had died mid-step, until `hung` releases it. */
const dies = new Set<string>();
/** Releases the hung runs (their step throws), so that their runtime can close. */
const hung: (() => void)[] = [];
const work = defineWorkflow({
  name: 'supervised',
  input: z.object({}),
  async run(ctx) {
    return ctx.step('work', async ({ executionId }) => {
      if (dies.delete(executionId))
        await new Promise<never>((_, reject) => hung.push(() => reject(new Error('the owner is gone'))));
      return 'done';
    });
  },
});

async function withStores<T>(fn: (stores: Stores) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'skein-bench-supervision-'));
  const stores = openSqliteStores({ path: join(dir, 'bench.db'), durability: 'normal' });
  try {
    return await fn(stores);
  } finally {
    await stores.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Ms from lease expiry to EXECUTION_RECOVERED, per execution, with a supervisor ticking every TICK_MS. */
async function expiryToResume(count: number): Promise<number[]> {
  return withStores(async (stores) => {
    // The owner: leases off here, its lease row written by hand so the expiry time is known.
    const owner = createRuntime({ stores, workflows: [work] });
    const runtime = createRuntime({ stores, workflows: [work], lease: { ttlMs: TTL_MS } });
    const supervisor = new Supervisor({ runtime, stores, leaseTtlMs: TTL_MS, tickIntervalMs: TICK_MS });
    supervisor.start();
    const samples: number[] = [];
    try {
      for (let i = 0; i < count; i++) {
        const id = `expiry-${i}`;
        dies.add(id);
        await owner.start(work, {}, { executionId: id });
        const lease = await stores.leases.claim(executionLeaseKey(id), 'dead-node', TTL_MS, Date.now());
        const state = await runtime.result(id, 5);
        if (state !== 'done') throw new Error(`execution ${id} ended with ${String(state)}`);
        const recovered = (await runtime.history(id)).find((e) => e.type === 'EXECUTION_RECOVERED');
        samples.push(recovered!.recordedAt.getTime() - lease!.expiresAt);
      }
    } finally {
      await supervisor.stop();
      await runtime.close();
      for (const release of hung.splice(0)) release();
      await owner.close();
    }
    return samples;
  });
}

/** One recoverAbandoned pass over `sizes.pass` pending executions, `sizes.abandoned` of them with expired leases. */
async function recoverPass(
  sizes: SupervisionSizes,
): Promise<{ ms: number; recovered: number; scanned: number }> {
  return withStores(async (stores) => {
    const runtime: Runtime = createRuntime({ stores, workflows: [work] });
    await throughput(sizes.pass, 100, (i) => runtime.enqueue(work, {}, { executionId: `p-${i}` }));
    const now = Date.now();
    for (let i = 0; i < sizes.pass; i++) {
      const ttl = i < sizes.abandoned ? 0 : 3_600_000; // expired at once, or live for an hour
      await stores.leases.claim(executionLeaseKey(`p-${i}`), 'other-node', ttl, now);
    }
    const start = nowMs();
    const report = await recoverAbandoned(runtime, { isAbandoned: leaseExpired(stores) });
    const ms = nowMs() - start;
    await runtime.close();
    return { ms, recovered: report.recovered.length, scanned: report.scanned };
  });
}

/** Run every supervision measurement; return the table rows. */
export async function supervision(sizes: SupervisionSizes): Promise<Row[]> {
  const expiry = await expiryToResume(sizes.expiries);
  const pass = await recoverPass(sizes);
  return [
    {
      metric: `lease expiry → EXECUTION_RECOVERED, median (TTL ${TTL_MS} ms, tick ${TICK_MS} ms, normal)`,
      value: median(expiry),
      unit: 'ms',
    },
    { metric: 'lease expiry → EXECUTION_RECOVERED, max', value: percentile(expiry, 100), unit: 'ms' },
    {
      metric: `recoverAbandoned pass over ${pass.scanned} executions, ${pass.recovered} recovered (normal)`,
      value: pass.ms,
      unit: 'ms',
      target: sizes.pass >= 10_000 ? '< 1000' : undefined,
      met: sizes.pass >= 10_000 ? pass.ms < 1_000 : undefined,
    },
  ];
}
