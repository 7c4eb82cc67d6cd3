/**
 * Issue #23 / adr/0049: a crash between an update's send and its record, or between its
 * record and the reply, loses nothing and applies nothing twice. A real process on a SQLite
 * file is SIGKILLed at each point; a new process asks again with the same `updateId`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { openSqliteStores } from '@skein/store-sqlite';
import { readHistory } from '@skein/workflow-runtime';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const script = fileURLToPath(new URL('./fixtures/update-process.ts', import.meta.url));

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

async function killAt(child: ChildProcess, line: string): Promise<void> {
  const exit = exited(child);
  for await (const printed of createInterface({ input: child.stdout! })) {
    if (printed === line) {
      child.kill('SIGKILL');
      break;
    }
  }
  expect((await exit).signal).toBe('SIGKILL');
}

async function typesOf(dbPath: string): Promise<string[]> {
  const stores = openSqliteStores({ path: dbPath });
  try {
    return (await readHistory(stores.events, 'cart-k')).map((event) => event.type);
  } finally {
    await stores.close();
  }
}

describe('an update survives SIGKILL of the process that sent and applied it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'skein-update-crash-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['before it is recorded (it waits in the inbox)', 'before', 'sent', 0],
    ['after it is recorded, before the reply', 'after', 'recorded', 1],
  ])(
    'killed %s: a new process asks with the same id, gets the result, and the log applied it once',
    async (_, mode, line, recordedBefore) => {
      const dbPath = join(dir, `${mode}.db`);
      await killAt(spawnProcess([mode, dbPath]), line);
      expect((await typesOf(dbPath)).filter((type) => type === 'UPDATE_APPLIED')).toHaveLength(
        recordedBefore,
      );

      const restarted = spawnProcess(['restart', dbPath]);
      const lines: string[] = [];
      for await (const printed of createInterface({ input: restarted.stdout! })) lines.push(printed);
      expect((await exited(restarted)).code).toBe(0);
      expect(lines).toEqual(['update 1', 'done ada: apple']);
      const log = await typesOf(dbPath);
      expect(log.filter((type) => type === 'UPDATE_APPLIED')).toHaveLength(1);
      expect(log.at(-1)).toBe('EXECUTION_COMPLETED');
    },
  );
});
