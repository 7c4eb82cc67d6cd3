/**
 * One node of the queue tests, a real process: a runtime with leases on, the test's queues,
 * and a Supervisor on the shared schema. Prints `ready` once ticking; exits when its parent
 * goes away (stdin closes).
 * With `schedule`, it also registers the ticker schedule (its leader fires it).
 * Usage: node --import tsx queue-node.ts <url> <schema> [schedule]
 */
import { openPostgresStores } from '@skein/store-postgres';
import { Supervisor } from '@skein/worker-runtime-local';
import { createRuntime } from '@skein/workflow-runtime';
import pg from 'pg';
import {
  LEASE_TTL_MS,
  limited,
  napWorkflow,
  queueWorkflow,
  ranked,
  rated,
  shared,
  single,
  TICK_MS,
  tickerSchedule,
  urgent,
} from './queue-workflow.js';

const [url, schema, mode] = process.argv.slice(2) as [string, string, string | undefined];
const stores = await openPostgresStores({ url, schema, poolSize: 4 });
const probes = new pg.Pool({ connectionString: url, max: 4, options: `-c search_path=${schema}` });
const report = (error: unknown, context: string) =>
  process.stderr.write(
    `[node ${process.pid}] ${context}: ${error instanceof Error ? error.message : String(error)}\n`,
  );
probes.on('error', (error) => report(error, 'probe pool'));
const probe = {
  async enter(executionId: string, queue: string, token: string) {
    await probes.query('INSERT INTO q_active (execution_id, pid, token) VALUES ($1, $2, $3)', [
      executionId,
      process.pid,
      token,
    ]);
    await probes.query('INSERT INTO q_starts (execution_id, pid, queue) VALUES ($1, $2, $3)', [
      executionId,
      process.pid,
      queue,
    ]);
  },
  async leave(token: string) {
    await probes.query('DELETE FROM q_active WHERE token = $1', [token]);
  },
};
const workflow = queueWorkflow(probe);
const runtime = createRuntime({
  stores,
  workflows: [workflow, napWorkflow(probe)],
  queues: [limited, rated, urgent, single, shared, ranked],
  schedules: mode === 'schedule' ? [tickerSchedule(workflow)] : [],
  lease: { ttlMs: LEASE_TTL_MS, owner: `node-${process.pid}` },
  onError: report,
});
const supervisor = new Supervisor({
  runtime,
  stores,
  tickIntervalMs: TICK_MS,
  concurrency: 8,
  onError: report,
});
supervisor.start();
process.stdout.write('ready\n');

async function shutdown(): Promise<void> {
  await supervisor.stop();
  await runtime.close();
  await stores.close();
  await probes.end();
  process.exit(0);
}
process.stdin.on('close', () => void shutdown());
process.stdin.resume();
