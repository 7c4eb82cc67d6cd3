/**
 * The real `skein` executable (packages/cli/dist/bin.js), run as a child process. The tests
 * need it built: under `CI=true` (which builds first) a missing or stale build fails; locally
 * it is rebuilt with its workspace dependencies, one test file at a time (a lock directory).
 */
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packages = fileURLToPath(new URL('../../../', import.meta.url));
/** The executable under test. */
export const BIN = join(packages, 'cli/dist/bin.js');
/** Packages whose `dist` the executable loads. */
const BUILT = [
  'workflow-runtime',
  'worker-runtime',
  'worker-runtime-local',
  'store-sqlite',
  'store-postgres',
  'cli',
];

function newest(dir: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

function stale(): string[] {
  return BUILT.filter((name) => {
    const entry = join(packages, name, 'dist/index.js');
    try {
      return statSync(entry).mtimeMs < newest(join(packages, name, 'src'));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true; // never built
      throw error;
    }
  });
}

/** Make sure `BIN` is built from the current sources (see the module comment). */
export async function ensureBuilt(): Promise<void> {
  if (stale().length === 0) return;
  if (process.env.CI === 'true')
    throw new Error(
      `the build of ${stale().join(', ')} is missing or older than its sources: run pnpm build first`,
    );
  const lock = join(tmpdir(), 'skein-cli-build.lock');
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      await new Promise((resolve) => setTimeout(resolve, 500)); // another test file is building
    }
  }
  try {
    const left = stale();
    if (left.length > 0) {
      console.warn(`building ${left.join(', ')} for the CLI tests (their dist is older than src)`);
      execFileSync('pnpm', ['--filter', '@skein/cli...', 'run', 'build'], { cwd: packages, stdio: 'ignore' });
    }
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** What one run of the executable printed and how it ended. */
export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run `skein ...args` to its end. */
export function skein(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...process.env, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error !== null && typeof error.code !== 'number') {
          reject(error);
          return;
        }
        resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr });
      },
    );
  });
}

/** A running `skein` process (for `ui` and `history --follow`) and what it printed so far. */
export interface Spawned {
  child: ChildProcess;
  output(): string;
  /** Resolves with the first match of `pattern` in stdout. */
  waitFor(pattern: RegExp): Promise<RegExpMatchArray>;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
}

/** Start `skein ...args` in the background. */
export function spawnSkein(args: readonly string[]): Spawned {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const waiters: (() => void)[] = [];
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    for (const wake of waiters.splice(0)) wake();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output: () => out,
    exited,
    waitFor(pattern) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = out.match(pattern);
          if (match !== null) resolve(match);
          else if (child.exitCode !== null) reject(new Error(`skein exited ${child.exitCode}: ${out}${err}`));
          else waiters.push(check);
        };
        child.once('exit', check);
        check();
      });
    },
  };
}
