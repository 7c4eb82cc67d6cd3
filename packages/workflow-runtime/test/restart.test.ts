import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { openSqliteStores } from '@skein/store-sqlite';
import { createRuntime, type Runtime } from '@skein/workflow-runtime';
import { afterAll, describe, expect, it } from 'vitest';
import { order, sleeper } from './fixtures/restart-process.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const script = fileURLToPath(new URL('./fixtures/restart-process.ts', import.meta.url));

function spawnProcess(args: string[]): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: root,
    env: { ...process.env, TSX_TSCONFIG_PATH: `${root}tsconfig.json` },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/** A runtime that only reads and enqueues: its maintenance is off, so it runs nothing. */
function readerOf(dbPath: string): { runtime: Runtime; close: () => Promise<void> } {
  const stores = openSqliteStores({ path: dbPath });
  const runtime = createRuntime({ stores, workflows: [sleeper, order], maintenance: false });
  return { runtime, close: () => stores.close() };
}

describe('a restarted process picks its work back up with no Supervisor', () => {
  const dir = mkdtempSync(join(tmpdir(), 'skein-restart-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('after SIGKILL, a plain createRuntime fires the overdue timer, recovers the orphan after its lease and runs the queued work', async () => {
    const dbPath = join(dir, 'skein.db');
    const effectsFile = join(dir, 'effects.log');
    const first = spawnProcess(['first', dbPath, effectsFile]);
    const firstExit = exited(first);
    for await (const line of createInterface({ input: first.stdout! })) {
      if (line === 'in-step ship') {
        first.kill('SIGKILL');
        break;
      }
    }
    expect((await firstExit).signal).toBe('SIGKILL');

    const reader = readerOf(dbPath);
    try {
      expect((await reader.runtime.loadState('sleeper-1'))?.status).toBe('suspended');
      expect((await reader.runtime.loadState('order-1'))?.status).toBe('running');
      await reader.runtime.enqueue(order, { id: 'order-2' }, { executionId: 'order-2' });
      // The timer falls due while nobody runs: the process that set it is gone.
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      expect((await reader.runtime.loadState('sleeper-1'))?.status).toBe('suspended');
      expect((await reader.runtime.loadState('order-2'))?.status).toBe('pending');
    } finally {
      await reader.close();
    }

    const restarted = spawnProcess(['restart', dbPath, effectsFile, 'sleeper-1', 'order-1', 'order-2']);
    const lines: string[] = [];
    for await (const line of createInterface({ input: restarted.stdout! })) lines.push(line);
    expect((await exited(restarted)).code).toBe(0);
    expect(lines).toEqual(['done sleeper-1 rested', 'done order-1 shipped', 'done order-2 shipped']);

    const after = readerOf(dbPath);
    try {
      const types = async (id: string) => (await after.runtime.history(id)).map((event) => event.type);
      expect(await types('sleeper-1')).toContain('TIMER_FIRED');
      const orphan = await types('order-1');
      expect(orphan.filter((type) => type === 'EXECUTION_RECOVERED')).toHaveLength(1);
      expect(orphan.at(-1)).toBe('EXECUTION_COMPLETED');
      expect((await types('order-2')).at(-1)).toBe('EXECUTION_COMPLETED');
    } finally {
      await after.close();
    }
    const effects = readFileSync(effectsFile, 'utf8').trim().split('\n');
    const times = (name: string) => effects.filter((line) => line === name).length;
    expect(times('before-sleep')).toBe(1);
    expect(times('after-sleep')).toBe(1);
    expect(times('charge')).toBe(2); // once for order-1, once for order-2: never again on recovery
    expect(times('ship')).toBe(3); // order-1's interrupted step ran again, and only it; order-2's once
  }, 60_000);
});
