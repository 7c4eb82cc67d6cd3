/** Run a TypeScript file of this folder in a new Node process, with the workspace's module paths. */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Spawn `node --import tsx <file> ...args`; stdout is piped, stderr inherited. */
export function spawnScript(file: string, args: string[]): ChildProcess {
  return spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL(file, import.meta.url)), ...args],
    {
      cwd: root,
      env: { ...process.env, TSX_TSCONFIG_PATH: `${root}tsconfig.json` },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
}

/** Resolve with the exit code and signal of a child process. */
export function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}
