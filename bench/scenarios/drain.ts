/**
 * The plain queue path on PostgreSQL (issue 21 item 6): `count` 3-step executions enqueued with
 * no named queue (nothing runs them yet), then one node's Supervisor (concurrency 50, pool 10,
 * wake-ups on, leases on) claims and runs the backlog. `postgres-core` reports one drain;
 * `--only drain` runs it alone in rounds, in a fresh schema each, with the statements this
 * process sent per execution by name, for the enqueue and for the drain.
 */
import { openPostgresStores } from '@skein/store-postgres';
import { Supervisor } from '@skein/worker-runtime-local';
import { createRuntime } from '@skein/workflow-runtime';
import {
  countPgStatementNames,
  pgStatementsByName,
  statementsBetween,
} from '../counting/pg-statement-names.js';
import { admin } from '../engines/pg-admin.js';
import { stepsWorkflow } from '../engines/skein.js';
import { median, nowMs, throughput } from '../measure.js';
import type { Row } from '../report.js';

const PG_URL = process.env.SKEIN_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const three = stepsWorkflow(3);

/** Sizes of `--only drain`. */
export interface DrainSizes {
  /** Executions enqueued, then drained, per round. */
  executions: number;
  rounds: number;
}

export const drainFullSizes: DrainSizes = { executions: 2_000, rounds: 5 };
export const drainSmokeSizes: DrainSizes = { executions: 50, rounds: 1 };

/** One drain: enqueues per second, executions completed per second while draining, statements by name. */
export interface Drain {
  enqueues: number;
  drained: number;
  /** This process's CPU (user + system) from the supervisor's start to the last execution's end, µs per execution. */
  cpuUs: number;
  /** Statements sent while enqueueing, by name (counted only once `countPgStatementNames` ran). */
  enqueueStatements: Map<string, number>;
  /** Statements sent from the supervisor's start to the last execution's end, by name. */
  drainStatements: Map<string, number>;
}

/** Statements of the bench itself (its drain poll), left out of the counts. */
const BENCH_STATEMENT = 'bench_drain_left';

function withoutBench(counts: Map<string, number>): Map<string, number> {
  counts.delete(BENCH_STATEMENT);
  return counts;
}

/**
 * Enqueue `count` executions into `schema` (which exists), then drain them with one Supervisor;
 * `verify` (default: true) checks every result afterwards (off only to profile the drain alone).
 */
export async function drainOnce(schema: string, count: number, verify = true): Promise<Drain> {
  const stores = await openPostgresStores({ url: PG_URL, schema, poolSize: 10 });
  const runtime = createRuntime({ stores, workflows: [three], lease: { ttlMs: 30_000 } });
  const supervisor = new Supervisor({
    runtime,
    stores,
    leaseTtlMs: 30_000,
    tickIntervalMs: 1_000,
    concurrency: 50,
    wakeups: stores.wakeups,
    onError: (error, context) => console.error(`bench supervisor: ${context}:`, error),
  });
  try {
    const ids = Array.from({ length: count }, (_, i) => `queued-${i}`);
    const beforeEnqueue = pgStatementsByName();
    const enqueues = await throughput(count, 20, (i) =>
      runtime.enqueue(three, { n: i }, { executionId: ids[i]! }),
    );
    const beforeDrain = pgStatementsByName();
    const start = nowMs();
    const cpu = process.cpuUsage();
    supervisor.start();
    await admin(async (client) => {
      // None of them left pending or running means drained: a range scan of the status index over
      // the few that are, cheap enough to poll every 10 ms.
      const left = {
        name: BENCH_STATEMENT,
        text: `SELECT count(*)::int AS n FROM "${schema}".skein_executions
          WHERE status IN ('pending', 'running') AND execution_id LIKE 'queued-%'`,
      };
      const deadline = nowMs() + 120_000;
      while ((await client.query<{ n: number }>(left)).rows[0]!.n > 0) {
        if (nowMs() > deadline) throw new Error('the queued executions did not drain within 120 s');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    });
    const drained = count / ((nowMs() - start) / 1000);
    const used = process.cpuUsage(cpu);
    const afterDrain = pgStatementsByName();
    for (const [i, id] of verify ? ids.entries() : []) {
      const output = await runtime.result(id);
      if (output !== i + 3) throw new Error(`${id} ended with ${String(output)}`);
    }
    return {
      enqueues,
      drained,
      cpuUs: (used.user + used.system) / count,
      enqueueStatements: withoutBench(statementsBetween(beforeEnqueue, beforeDrain)),
      drainStatements: withoutBench(statementsBetween(beforeDrain, afterDrain)),
    };
  } finally {
    await supervisor.stop();
    await runtime.close();
    await stores.close();
  }
}

function total(counts: ReadonlyMap<string, number>): number {
  let sum = 0;
  for (const count of counts.values()) sum += count;
  return sum;
}

/** `drainOnce` in `sizes.rounds` fresh schemas; the rows are medians over the rounds. */
export async function drain(sizes: DrainSizes): Promise<Row[]> {
  countPgStatementNames();
  const rounds: Drain[] = [];
  for (let round = 0; round < sizes.rounds; round++) {
    const schema = `skein_bench_drain_${process.pid}_${round}`;
    await admin((client) => client.query(`CREATE SCHEMA "${schema}"`));
    try {
      rounds.push(await drainOnce(schema, sizes.executions));
    } finally {
      await admin((client) => client.query(`DROP SCHEMA "${schema}" CASCADE`));
    }
  }
  const n = sizes.executions;
  const what = `${n} enqueued 3-step workflows, one Supervisor, concurrency 50 (postgres)`;
  const perExecution = (pick: (round: Drain) => Map<string, number>) => {
    const names = new Set(rounds.flatMap((round) => [...pick(round).keys()]));
    return [...names]
      .map((name) => ({ name, value: median(rounds.map((round) => (pick(round).get(name) ?? 0) / n)) }))
      .sort((a, b) => b.value - a.value);
  };
  const rows: Row[] = [
    {
      metric: `drained wf/s, ${what}, rounds ${rounds.map((r) => Math.round(r.drained)).join(' / ')}`,
      value: median(rounds.map((round) => round.drained)),
      unit: 'wf/s',
      target: '>= 1500 every round',
      met: rounds.every((round) => round.drained >= 1500),
    },
    {
      metric: `this process's CPU per execution while draining, ${what}`,
      value: median(rounds.map((round) => round.cpuUs)),
      unit: 'µs',
    },
    {
      metric: `enqueues/s, 20 at a time, ${what}`,
      value: median(rounds.map((r) => r.enqueues)),
      unit: 'wf/s',
    },
    {
      metric: `statements per execution, enqueue, ${what}`,
      value: median(rounds.map((round) => total(round.enqueueStatements) / n)),
      unit: 'statements',
    },
    {
      metric: `statements per execution, drain, ${what}`,
      value: median(rounds.map((round) => total(round.drainStatements) / n)),
      unit: 'statements',
    },
  ];
  for (const [phase, pick] of [
    ['enqueue', (round: Drain) => round.enqueueStatements],
    ['drain', (round: Drain) => round.drainStatements],
  ] as const) {
    for (const { name, value } of perExecution(pick)) {
      if (value >= 0.001)
        rows.push({ metric: `  ${phase}: ${name} per execution`, value, unit: 'statements' });
    }
  }
  return rows;
}
