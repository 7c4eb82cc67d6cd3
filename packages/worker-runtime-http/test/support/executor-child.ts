/**
 * An executor in its own process: `node --import tsx executor-child.ts <hub> <stateDir> <mode> <secret>`.
 * Prints `started <json>` once it holds a session and `pass <json>` for each reconciliation
 * pass. Mode `hold-after-retain` prints `retained <id>` once a result is retained and then
 * never reports it (the parent kills it there); mode `run` reports as usual. SIGTERM stops it.
 */
import { createExecutor } from '@skein/worker-runtime-http';
import { paint } from './executor-workflow.js';

const [hub, stateDir, mode, secret] = process.argv.slice(2) as [string, string, string, string];
const say = (line: string) => process.stdout.write(`${line}\n`);
const executor = createExecutor({
  id: 'exec-child',
  hub,
  secret,
  stateDir,
  workflows: [paint],
  packageVersion: '1.0.0',
  pollWaitMs: 1_000,
  reconnectMs: 100,
  logger: {
    info: (message, details) => {
      if (message === 'reconciliation pass') say(`pass ${JSON.stringify(details)}`);
    },
    warn: () => undefined,
    error: (message, details) => process.stderr.write(`${message} ${String(details.error ?? '')}\n`),
  },
  onRetained: async ({ executionId }) => {
    if (mode !== 'hold-after-retain') return;
    say(`retained ${executionId}`);
    await new Promise(() => undefined);
  },
});
process.once('SIGTERM', () => {
  void executor.stop().then(() => process.exit(0));
});
say(`started ${JSON.stringify(await executor.start())}`);
