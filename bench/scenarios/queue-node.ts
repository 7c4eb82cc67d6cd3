/**
 * One Skein node of the queue bench, a process of its own: a runtime with the bench queue and a
 * Supervisor (wake-ups on) on the given schema. Prints `ready` once ticking; exits when its
 * parent closes stdin. Usage: node --import tsx queue-node.ts <url> <schema>
 */
import { openPostgresStores } from '@skein/store-postgres';
import { Supervisor } from '@skein/worker-runtime-local';
import { createRuntime } from '@skein/workflow-runtime';
import { benchQueue, queueWorkflow } from './queue-shared.js';

const [url, schema] = process.argv.slice(2) as [string, string];
const stores = await openPostgresStores({ url, schema, poolSize: 10 });
const report = (error: unknown, context: string) =>
  process.stderr.write(`[bench node ${process.pid}] ${context}: ${String(error)}\n`);
const runtime = createRuntime({
  stores,
  workflows: [queueWorkflow],
  queues: [benchQueue],
  lease: { ttlMs: 30_000 },
  onError: report,
});
const supervisor = new Supervisor({
  runtime,
  stores,
  tickIntervalMs: 1_000,
  concurrency: 50,
  wakeups: stores.wakeups,
  onError: report,
});
supervisor.start();
await supervisor.listening();
process.stdout.write('ready\n');

process.stdin.on('close', () => {
  void (async () => {
    await supervisor.stop();
    await runtime.close();
    await stores.close();
    process.exit(0);
  })();
});
process.stdin.resume();
