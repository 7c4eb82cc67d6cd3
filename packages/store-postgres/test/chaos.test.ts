/**
 * Chaos across real processes: 4 worker processes and 1 supervisor process share one
 * PostgreSQL schema; 500 five-step executions are enqueued and claimed by the nodes'
 * Supervisors; a random worker is SIGKILLed about every 300 ms and replaced. At the end every
 * execution is completed, every log keeps L1, L2, L3 and L6, and each step's effect (a row the
 * step inserts) ran once, plus at most once more per takeover that interrupted the step.
 */
import { openPostgresStores, type PostgresStores } from '@skein/store-postgres';
import { checkLog } from '@skein/testkit';
import { type Client, createClient, type Envelope } from '@skein/workflow-runtime';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { effectViolation, stepHistory } from './chaos/effects-check.js';
import { type NodeProcess, NodeProcesses } from './chaos/processes.js';
import { CREATE_EFFECTS_TABLE, chaosWorkflow, STEPS } from './chaos/workflow.js';
import { dropSchema, freshSchema, PG_URL, whenPostgres } from './support/pg.js';

const EXECUTIONS = 500;
const WORKERS = 4;
const KILL_EVERY_MS = 300;
/** Kills stop after this long, even if executions are left; the rest must then complete. */
const CHAOS_LIMIT_MS = 45_000;
const SETTLE_LIMIT_MS = 45_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const idOf = (i: number) => `chaos-${String(i).padStart(3, '0')}`;

whenPostgres(() => {
  describe('chaos: 4 worker processes and a supervisor process on one PostgreSQL schema', () => {
    const schema = freshSchema();
    const nodes = new NodeProcesses(PG_URL, schema);
    let stores: PostgresStores | undefined;
    let sql: pg.Client | undefined;
    let client: Client | undefined;

    afterAll(async () => {
      try {
        await nodes.killAll();
        await client?.close();
        await stores?.close();
        await sql?.end();
      } finally {
        await dropSchema(schema);
      }
    }, 30_000);

    async function statusCounts(): Promise<Record<string, number>> {
      const { rows } = await sql!.query<{ status: string; n: number }>(
        'SELECT status, count(*)::int AS n FROM skein_executions GROUP BY status',
      );
      return Object.fromEntries(rows.map((row) => [row.status, row.n]));
    }
    const completed = async () => (await statusCounts()).completed ?? 0;

    it('every execution completes; logs keep L1/L2/L3/L6; each effect ran once plus once per interruption', async () => {
      stores = await openPostgresStores({ url: PG_URL, schema, poolSize: 4 });
      sql = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` });
      await sql.connect();
      await sql.query(CREATE_EFFECTS_TABLE);

      const supervisor = nodes.spawn('supervisor');
      await supervisor.ready; // first, so it takes the leader lease and keeps it (it is never killed)
      const workers: NodeProcess[] = Array.from({ length: WORKERS }, () => nodes.spawn('worker'));
      await Promise.all(workers.map((worker) => worker.ready));

      const workflow = chaosWorkflow(() => Promise.reject(new Error('the test process runs no steps')));
      // Only the nodes run work: this process enqueues and reads, as a client does.
      const runtime = createClient({ stores, workflows: [workflow] });
      client = runtime;
      const started = Date.now();
      for (let i = 0; i < EXECUTIONS; i += 50) {
        const batch = Array.from({ length: Math.min(50, EXECUTIONS - i) }, (_, j) => i + j);
        await Promise.all(batch.map((n) => runtime.enqueue(workflow, { n }, { executionId: idOf(n) })));
      }

      let kills = 0;
      while (Date.now() - started < CHAOS_LIMIT_MS && (await completed()) < EXECUTIONS) {
        await sleep(KILL_EVERY_MS);
        const ready = workers.filter((worker) => worker.isReady());
        const victim = ready[Math.floor(Math.random() * ready.length)];
        if (victim === undefined) continue;
        await nodes.kill(victim);
        kills += 1;
        workers[workers.indexOf(victim)] = nodes.spawn('worker');
      }
      const chaosMs = Date.now() - started;
      const settleDeadline = Date.now() + SETTLE_LIMIT_MS;
      while ((await completed()) < EXECUTIONS && Date.now() < settleDeadline) await sleep(100);
      const totalMs = Date.now() - started;
      const statuses = await statusCounts();
      await nodes.killAll(); // nothing moves while the logs are checked
      if (statuses.completed !== EXECUTIONS) console.error(nodes.stderr);
      expect(statuses).toEqual({ completed: EXECUTIONS });

      const logs = new Map<string, Envelope[]>();
      for (let i = 0; i < EXECUTIONS; i += 50) {
        const ids = Array.from({ length: Math.min(50, EXECUTIONS - i) }, (_, j) => idOf(i + j));
        const read = await Promise.all(ids.map((id) => runtime.history(id)));
        for (const [j, id] of ids.entries()) logs.set(id, read[j]!);
      }
      const violations = [...logs.entries()].flatMap(([id, log]) =>
        checkLog(log).map((v) => `${id}: ${v.invariant} ${v.message}`),
      );
      expect(violations).toEqual([]);
      for (const [id, log] of logs) {
        expect(log.at(-1)!.type, id).toBe('EXECUTION_COMPLETED');
        expect(log.at(-1)!.payload, id).toEqual({ output: Number(id.slice('chaos-'.length)) + STEPS.length });
      }

      const { rows } = await sql.query<{ execution_id: string; step: string; n: number }>(
        'SELECT execution_id, step, count(*)::int AS n FROM chaos_effects GROUP BY execution_id, step',
      );
      const ran = new Map(rows.map((row) => [`${row.execution_id}/${row.step}`, row.n]));
      const problems: string[] = [];
      let interrupted = 0;
      let extraRuns = 0;
      let maxRuns = 0;
      for (const [id, log] of logs) {
        for (const step of STEPS) {
          const history = stepHistory(log, step);
          const times = ran.get(`${id}/${step}`) ?? 0;
          const problem = effectViolation(id, history, times);
          if (problem !== undefined) problems.push(problem);
          if (history.interruptions > 0) interrupted += 1;
          extraRuns += Math.max(0, times - 1);
          maxRuns = Math.max(maxRuns, times);
        }
      }
      expect(problems).toEqual([]);
      expect(ran.size).toBe(EXECUTIONS * STEPS.length);
      // A node's claim of an enqueued execution is recorded as a takeover "from status pending" too.
      const recoveries = [...logs.values()]
        .flat()
        .filter(
          (e) =>
            e.type === 'EXECUTION_RECOVERED' &&
            !String((e.payload as { reason?: string }).reason).endsWith('pending'),
        ).length;
      console.log(
        `chaos: ${EXECUTIONS} executions x ${STEPS.length} steps on ${WORKERS} workers + 1 supervisor; ` +
          `${kills} workers SIGKILLed (${nodes.all.length} node processes in all) over ${chaosMs} ms; ` +
          `all completed after ${totalMs} ms; ${recoveries} takeovers of running executions, ` +
          `${interrupted} interrupted steps, ${extraRuns} extra effect runs, max ${maxRuns} runs of one step's effect`,
      );
      // Not vacuous: the kills did interrupt steps, and the check above had re-runs to judge.
      expect(kills).toBeGreaterThan(5);
      expect(interrupted).toBeGreaterThan(0);
    }, 150_000);
  });
});
