/**
 * Issue 23.6, adr/0065: a deadline is durable across a real crash. A process starts an execution
 * with `timeoutMs` and is SIGKILLed in the middle of a step; a fresh runtime on the same SQLite
 * file cancels it at the deadline: the interrupted step is not run again, the cleanup runs, and
 * it ends cancelled with `DeadlineExceededError`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { openSqliteStores } from '@skein/store-sqlite';
import { createRuntime, DeadlineExceededError, ExecutionFailedError } from '@skein/workflow-runtime';
import { afterAll, describe, expect, it } from 'vitest';
import { quoteOf } from './fixtures/deadline-process.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const script = fileURLToPath(new URL('./fixtures/deadline-process.ts', import.meta.url));

function spawnProcess(args: string[]): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: root,
    env: { ...process.env, TSX_TSCONFIG_PATH: `${root}tsconfig.json` },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

describe('a deadline across a SIGKILL', () => {
  const dir = mkdtempSync(join(tmpdir(), 'skein-deadline-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a process killed mid-step: a fresh runtime cancels the execution at its deadline, the step not run again', async () => {
    const dbPath = join(dir, 'skein.db');
    const effectsFile = join(dir, 'effects.log');
    const first = spawnProcess(['first', dbPath, effectsFile]);
    const exited = new Promise((resolve) => first.once('exit', (_code, signal) => resolve(signal)));
    for await (const line of createInterface({ input: first.stdout! })) {
      if (line === 'in-step call') break;
    }
    first.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');

    const stores = openSqliteStores({ path: dbPath });
    const runtime = createRuntime({
      stores,
      workflows: [quoteOf(effectsFile, false)],
      lease: { ttlMs: 60_000 }, // the orphan's lease outlives the deadline: only the deadline ends it
      maintenance: { intervalMs: 50 },
      onError: () => undefined,
    });
    try {
      const failure = await runtime.result('quote-1').catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(ExecutionFailedError);
      expect((failure as ExecutionFailedError).cause).toBeInstanceOf(DeadlineExceededError);
      const log = await runtime.history('quote-1');
      const [started] = log;
      const at = started?.type === 'EXECUTION_STARTED' ? started.payload.deadline?.at : undefined;
      const requested = log.find((event) => event.type === 'CANCEL_REQUESTED');
      expect(requested?.recordedAt.getTime()).toBeGreaterThanOrEqual(at ?? Number.POSITIVE_INFINITY);
      expect(log.at(-1)?.type).toBe('EXECUTION_CANCELLED');
      expect(readFileSync(effectsFile, 'utf8').trim().split('\n')).toEqual(['call', 'hang-up']);
      expect(await stores.timers.forExecution('quote-1')).toEqual([]);
    } finally {
      await runtime.close();
      await stores.close();
    }
  });
});
