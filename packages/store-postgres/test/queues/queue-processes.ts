/**
 * Node processes of the queue tests: each is the leader of its own process group, so a SIGKILL
 * to the group ends it at once; `killAll` ends every one still alive.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const nodeScript = fileURLToPath(new URL('./queue-node.ts', import.meta.url));

/** A running node. */
export interface QueueNode {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Resolves once it ticks. */
  readonly ready: Promise<void>;
  alive(): boolean;
}

/** Every node spawned, and the tail of their stderr. */
export class QueueNodes {
  readonly all: QueueNode[] = [];
  stderr = '';

  constructor(
    private readonly url: string,
    private readonly schema: string,
  ) {}

  /** Start a node; with `schedule`, it registers the ticker schedule too. */
  spawn(mode?: 'schedule'): QueueNode {
    const args = [nodeScript, this.url, this.schema, ...(mode === undefined ? [] : [mode])];
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
      cwd: root,
      env: { ...process.env, TSX_TSCONFIG_PATH: `${root}tsconfig.json` },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    let exited = false;
    child.once('exit', () => {
      exited = true;
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-20_000);
    });
    child.stdin!.on('error', () => undefined);
    const ready = new Promise<void>((resolve, reject) => {
      createInterface({ input: child.stdout! }).on('line', (line) => {
        if (line === 'ready') resolve();
      });
      child.once('exit', (code, signal) => reject(new Error(`node ${child.pid} exited (${code ?? signal})`)));
    });
    ready.catch(() => undefined);
    const node: QueueNode = { child, pid: child.pid!, ready, alive: () => !exited };
    this.all.push(node);
    return node;
  }

  /** Pids of the nodes alive now. */
  livePids(): number[] {
    return this.all.filter((node) => node.alive()).map((node) => node.pid);
  }

  /** SIGKILL a node's process group; resolves once it has exited. */
  async kill(node: QueueNode): Promise<void> {
    if (!node.alive()) return;
    const gone = new Promise((resolve) => node.child.once('exit', resolve));
    try {
      process.kill(-node.pid, 'SIGKILL');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
    await gone;
  }

  async killAll(): Promise<void> {
    await Promise.all(this.all.map((node) => this.kill(node)));
  }
}
