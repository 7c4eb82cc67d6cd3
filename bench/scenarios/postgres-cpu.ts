/**
 * CPU per workflow on PostgreSQL (issue #26): 3-step workflows at concurrency 50 (pool 10) in a
 * fresh database of their own, with the CPU time that the Skein process and the server's
 * backends serving that database spent on them, next to the wall time. CPU does not move with
 * a loaded host as much as wall time does. The backends are found in `pg_stat_activity` by
 * database and read from /proc/<pid>/stat, so this needs the server on this machine; the WAL
 * writer, checkpointer and other shared server processes are left out (other databases on the
 * server use them too).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { openPostgresStores } from '@skein/store-postgres';
import { createRuntime } from '@skein/workflow-runtime';
import pg from 'pg';
import { createDatabase, dropDatabase } from '../engines/pg-admin.js';
import { stepsWorkflow } from '../engines/skein.js';
import { nowMs, throughput } from '../measure.js';
import type { Row } from '../report.js';

const three = stepsWorkflow(3);

/** Clock ticks per second of /proc's CPU times. */
export function clockTicks(): number {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
}

/** User + system CPU of process `pid` in ms, or undefined when it is not on this machine (or gone). */
export function procCpuMs(pid: number, ticks: number): number | undefined {
  const path = `/proc/${pid}/stat`;
  if (!existsSync(path)) return undefined;
  try {
    const stat = readFileSync(path, 'utf8');
    // Fields after the command name (which is in parentheses and may hold spaces): utime is the
    // 14th field of the line, stime the 15th.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(rest[11]) + Number(rest[12])) / ticks) * 1000;
  } catch {
    return undefined;
  }
}

async function backendPids(client: pg.Client, database: string): Promise<number[]> {
  const { rows } = await client.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
    [database],
  );
  return rows.map((row) => row.pid);
}

export async function postgresCpu(count: number, adminUrl: string): Promise<Row[]> {
  const database = `skein_bench_cpu_${process.pid}`;
  await dropDatabase(database);
  const url = await createDatabase(database);
  const ticks = clockTicks();
  const watcher = new pg.Client({ connectionString: adminUrl });
  await watcher.connect();
  try {
    const stores = await openPostgresStores({ url, poolSize: 10 });
    const runtime = createRuntime({ stores, workflows: [three] });
    try {
      const run = (prefix: string) => (i: number) =>
        runtime.execute({ executionId: `${prefix}${i}`, workflow: three.name, input: { n: i } });
      await throughput(Math.min(500, count), 50, run('warm-')); // opens the pool's 10 connections
      const pids = await backendPids(watcher, database);
      const serverBefore = new Map(pids.map((pid) => [pid, procCpuMs(pid, ticks)]));
      if ([...serverBefore.values()].some((ms) => ms === undefined)) {
        console.warn(
          'bench: postgres-cpu: the server is not on this machine (no /proc/<pid>): CPU rows SKIPPED',
        );
        return [];
      }
      const cpu = process.cpuUsage();
      const start = nowMs();
      const perSec = await throughput(count, 50, run('cpu-'));
      const wallMs = nowMs() - start;
      const used = process.cpuUsage(cpu);
      const after = await backendPids(watcher, database);
      if (after.some((pid) => !serverBefore.has(pid))) {
        console.warn(
          'bench: postgres-cpu: the pool opened connections during the loop; their CPU before it counts too',
        );
      }
      let serverMs = 0;
      for (const pid of new Set([...pids, ...after])) {
        serverMs += (procCpuMs(pid, ticks) ?? 0) - (serverBefore.get(pid) ?? 0);
      }
      const skeinUs = ((used.user + used.system) / count) as number;
      const serverUs = (serverMs * 1000) / count;
      return [
        {
          metric: '3-step workflows/s, concurrency 50, pool 10, own database (postgres)',
          value: perSec,
          unit: 'wf/s',
        },
        {
          metric: 'wall time per workflow at c50 (1 / throughput)',
          value: (wallMs * 1000) / count,
          unit: 'µs',
        },
        { metric: 'Skein process CPU per workflow at c50', value: skeinUs, unit: 'µs' },
        {
          metric: `PostgreSQL backend CPU per workflow at c50 (${pids.length} backends)`,
          value: serverUs,
          unit: 'µs',
        },
        {
          metric: 'machine CPU per workflow at c50 (Skein process + backends)',
          value: skeinUs + serverUs,
          unit: 'µs',
          baseline: { name: 'wall time per workflow', value: (wallMs * 1000) / count },
        },
      ];
    } finally {
      await runtime.close();
      await stores.close();
    }
  } finally {
    await watcher.end();
    await dropDatabase(database);
  }
}
