/**
 * The chaos test's node processes: each is spawned as the leader of its own process group
 * (`detached`), so a SIGKILL to the group also ends anything it started; `killAll` ends every
 * group still alive. A node also exits on its own when its stdin (a pipe from this process)
 * closes, should this process die without cleaning up.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** The repository root, wherever it is checked out. */
const root = fileURLToPath(new URL('../../../../', import.meta.url));
const nodeScript = fileURLToPath(new URL('./node.ts', import.meta.url));
/** Keep at most this much of the nodes' stderr, to show when the test fails. */
const MAX_STDERR = 20_000;

/** A running node. */
export interface NodeProcess {
  readonly role: 'worker' | 'supervisor';
  readonly child: ChildProcess;
  /** Resolves once the node ticks and listens; rejects if it exits first. */
  readonly ready: Promise<void>;
  isReady(): boolean;
  alive(): boolean;
}

/** Every node spawned, and the tail of their stderr. */
export class NodeProcesses {
  readonly all: NodeProcess[] = [];
  stderr = '';

  constructor(
    private readonly url: string,
    private readonly schema: string,
  ) {}

  /** Start a node of `role`. */
  spawn(role: 'worker' | 'supervisor'): NodeProcess {
    const child = spawn(process.execPath, ['--import', 'tsx', nodeScript, role, this.url, this.schema], {
      cwd: root,
      env: { ...process.env, TSX_TSCONFIG_PATH: `${root}tsconfig.json` },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    let exited = false;
    let ready = false;
    child.once('exit', () => {
      exited = true;
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-MAX_STDERR);
    });
    child.stdin!.on('error', () => undefined); // EPIPE from a killed node: nothing to deliver
    const readyPromise = new Promise<void>((resolve, reject) => {
      const lines = createInterface({ input: child.stdout! });
      lines.on('line', (line) => {
        if (line !== 'ready') return;
        ready = true;
        resolve();
      });
      child.once('exit', (code, signal) =>
        reject(new Error(`${role} ${child.pid} exited (${code ?? signal}) before it was ready`)),
      );
    });
    readyPromise.catch(() => undefined); // a node killed while starting is expected
    const node: NodeProcess = {
      role,
      child,
      ready: readyPromise,
      isReady: () => ready && !exited,
      alive: () => !exited,
    };
    this.all.push(node);
    return node;
  }

  /** SIGKILL a node's process group; resolves once the node has exited. */
  async kill(node: NodeProcess): Promise<void> {
    if (!node.alive()) return;
    const gone = new Promise((resolve) => node.child.once('exit', resolve));
    killGroup(node.child);
    await gone;
  }

  /** SIGKILL every node still alive, and wait for them to exit. */
  async killAll(): Promise<void> {
    await Promise.all(this.all.map((node) => this.kill(node)));
  }
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch (error) {
    // ESRCH: the group is already gone.
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}
