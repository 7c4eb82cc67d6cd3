/**
 * The worker process of the client test: a runtime and a Supervisor with LISTEN/NOTIFY
 * wake-ups on the test's schema. Prints `ready` once it listens; ends on SIGTERM or when its
 * stdin (a pipe from the test) closes.
 * Usage: node --import tsx worker.ts <url> <schema>
 */
import { openPostgresStores } from '@skein/store-postgres';
import { Supervisor } from '@skein/worker-runtime-local';
import { createRuntime } from '@skein/workflow-runtime';
import { approval, CLIENT_TEST_LEASE_TTL_MS } from './workflow.js';

const [url, schema] = process.argv.slice(2) as [string, string];
const stores = await openPostgresStores({ url, schema, poolSize: 3 });
const onError = (error: unknown, context: string) =>
  process.stderr.write(
    `[worker ${process.pid}] ${context}: ${error instanceof Error ? error.message : error}\n`,
  );
const runtime = createRuntime({
  stores,
  workflows: [approval],
  lease: { ttlMs: CLIENT_TEST_LEASE_TTL_MS },
  onError,
});
const supervisor = new Supervisor({
  runtime,
  stores,
  tickIntervalMs: 200,
  wakeups: stores.wakeups,
  onError,
});
supervisor.start();
await supervisor.listening();
process.stdout.write(`ready ${process.pid}\n`);

let stopping = false;
async function shutdown(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await supervisor.stop();
  await runtime.close();
  await stores.close();
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown());
process.stdin.on('end', () => void shutdown());
process.stdin.resume();
