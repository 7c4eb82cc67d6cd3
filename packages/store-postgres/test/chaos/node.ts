/**
 * One node of the chaos test, a real process: a runtime with leases on and a Supervisor (with
 * LISTEN/NOTIFY wake-ups) on the shared schema. It claims enqueued executions and runs them;
 * the `supervisor` role is never killed, so it keeps the leader lease and recovers the work of
 * killed workers. Prints `ready` once ticking; exits when its parent goes away (stdin closes).
 * Usage: node --import tsx node.ts <worker|supervisor> <url> <schema>
 */
import { openPostgresStores } from '@skein/store-postgres';
import { Supervisor } from '@skein/worker-runtime-local';
import { createRuntime } from '@skein/workflow-runtime';
import pg from 'pg';
import { chaosWorkflow, INSERT_EFFECT, LEASE_TTL_MS, NODE_CONCURRENCY, TICK_MS } from './workflow.js';

const [role, url, schema] = process.argv.slice(2) as [string, string, string];
const stores = await openPostgresStores({ url, schema, poolSize: 3 });
const effects = new pg.Pool({ connectionString: url, max: 2, options: `-c search_path=${schema}` });
const report = (error: unknown, context: string) =>
  process.stderr.write(
    `[${role} ${process.pid}] ${context}: ${error instanceof Error ? error.message : String(error)}\n`,
  );
effects.on('error', (error) => report(error, 'effects pool'));
const workflow = chaosWorkflow(async (executionId, step, attempt) => {
  await effects.query(INSERT_EFFECT, [executionId, step, attempt, process.pid]);
});
const runtime = createRuntime({
  stores,
  workflows: [workflow],
  lease: { ttlMs: LEASE_TTL_MS, owner: `${role}-${process.pid}` },
  onError: report,
});
const supervisor = new Supervisor({
  runtime,
  stores,
  leaseTtlMs: LEASE_TTL_MS,
  tickIntervalMs: TICK_MS,
  concurrency: NODE_CONCURRENCY,
  wakeups: stores.wakeups,
  onError: report,
});
supervisor.start();
await supervisor.listening();
process.stdout.write('ready\n');

async function shutdown(): Promise<void> {
  await supervisor.stop();
  await runtime.close();
  await stores.close();
  await effects.end();
  process.exit(0);
}
// The parent went away (or asked us to stop by closing stdin): never outlive it.
process.stdin.on('end', () => void shutdown());
process.stdin.on('error', () => void shutdown());
process.stdin.resume();
