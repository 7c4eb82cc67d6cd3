/**
 * `SandboxPool`: pre-warmed worker threads that run invocations of components, one at a time
 * each, a fresh instance every time, under per-invocation limits. A timed-out thread is
 * terminated and replaced; every other breach leaves the thread serving.
 */
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { parseWith } from '@skein/workflow-runtime/internal';
import { z } from 'zod';
import { SandboxComponent } from './component.js';
import { SandboxPoolClosedError, SandboxTimeoutError, SandboxTrapError, sandboxErrorFrom } from './errors.js';
import { resolveLimits, type SandboxLimits } from './limits.js';
import type { InvocationOutcome, WorkerMessage } from './protocol.js';
import { Semaphore } from './semaphore.js';
import { ready, startWorker } from './threads.js';

/** What {@link SandboxPool} takes. */
export interface SandboxPoolOptions {
  /** Worker threads, and so invocations running at once in this pool (default: the machine's available parallelism). */
  size?: number;
}

/** An invocation's output and what it used. */
export interface SandboxRun {
  output: string;
  /** Messages the guest logged, in order. */
  logs: string[];
  /** Fuel the invocation used; the same code and input use the same fuel every time. */
  fuelUsed: number;
  /** Epoch milliseconds at which its worker thread began and ended it. */
  startedAt: number;
  endedAt: number;
  /** `threadId` of the worker thread that ran it. */
  thread: number;
}

/** The process-wide cap on invocations running at once, over every pool (default: the available parallelism). */
const processWide = new Semaphore(availableParallelism());

interface Pending {
  component: string;
  resolve(message: WorkerMessage): void;
  reject(error: Error): void;
}

/** One worker thread of a pool and what it has loaded. */
class Slot {
  worker!: Worker;
  started!: Promise<void>;
  loaded = new Set<string>();
  private pending: Pending | undefined;
  private stopped = false;

  constructor() {
    this.start();
  }

  private start(): void {
    const worker = startWorker('sandbox');
    this.worker = worker;
    this.loaded = new Set();
    this.started = ready(worker);
    void this.started.catch(() => undefined); // the invocation that awaits it reports the failure
    const current = () => this.worker === worker && !this.stopped;
    worker.on('message', (message: WorkerMessage) => {
      if (message.type === 'ready' || !current()) return;
      const pending = this.pending;
      this.pending = undefined;
      pending?.resolve(message);
    });
    const died = (reason: string) => {
      if (!current()) return;
      const component = this.pending?.component ?? 'unknown';
      void this.restart(new SandboxTrapError(component, `the worker thread died: ${reason}`));
    };
    worker.on('error', (error) => died(error.message));
    worker.on('exit', (code) => died(`it exited with code ${code}`));
  }

  /** Post `message` for `component` and wait for the thread's answer. */
  request(component: string, message: object): Promise<WorkerMessage> {
    return new Promise((resolve, reject) => {
      this.pending = { component, resolve, reject };
      this.worker.postMessage(message);
    });
  }

  /** Replace the thread with a fresh one now; the pending request fails with `error`. */
  async restart(error: Error): Promise<void> {
    const old = this.worker;
    const pending = this.pending;
    this.pending = undefined;
    this.start();
    pending?.reject(error);
    await old.terminate();
  }

  /** Terminate the thread for good; the pending request fails with `error`. */
  async stop(error: Error): Promise<void> {
    this.stopped = true;
    const pending = this.pending;
    this.pending = undefined;
    pending?.reject(error);
    await this.worker.terminate();
  }
}

const inputSchema = z.string();

/**
 * A pool of worker threads that run sandboxed invocations.
 * @example
 * const pool = new SandboxPool({ size: 2 });
 * const score = await pool.invoke(evaluator, JSON.stringify(input), { fuel: 50_000_000, timeoutMs: 2_000 });
 * // in a workflow: await ctx.step('score', () => pool.invoke(evaluator, input, limits));
 * await pool.close();
 */
export class SandboxPool {
  /** Worker threads of this pool. */
  readonly size: number;
  private readonly slots: Slot[];
  private readonly idle: Slot[];
  private readonly permits: Semaphore;
  private closed = false;

  constructor(options: SandboxPoolOptions = {}) {
    const schema = z.object({ size: z.number().int().min(1).max(256).optional() }).strict();
    const { size } = parseWith(schema, options, 'SandboxPool options', 'options');
    this.size = size ?? availableParallelism();
    this.permits = new Semaphore(this.size);
    this.slots = Array.from({ length: this.size }, () => new Slot());
    this.idle = [...this.slots];
  }

  /**
   * Cap invocations running at once over all pools of this process (default: the available
   * parallelism); waiting invocations queue in arrival order.
   */
  static setProcessConcurrency(permits: number): void {
    processWide.resize(parseWith(z.number().int().min(1), permits, 'process concurrency', 'permits'));
  }

  /** Resolve when every thread has started. */
  async ready(): Promise<void> {
    await Promise.all(this.slots.map((slot) => slot.started));
  }

  /** Load `component` into every thread now, so no invocation pays for it. */
  async warm(component: SandboxComponent): Promise<void> {
    this.assertOpen();
    await Promise.all(this.slots.map((slot) => this.load(slot, component)));
  }

  /** Run `input` through a fresh instance of `component`; resolve with its output. */
  async invoke(component: SandboxComponent, input: string, limits?: SandboxLimits): Promise<string> {
    return (await this.run(component, input, limits)).output;
  }

  /**
   * Run `input` through a fresh instance of `component` under `limits` (each defaulted, see
   * `DEFAULT_LIMITS`). A breach rejects with its `SandboxError` (`SANDBOX_FUEL_EXHAUSTED`,
   * `SANDBOX_MEMORY_LIMIT`, `SANDBOX_TIMEOUT`, `SANDBOX_LOG_LIMIT`, `SANDBOX_TRAP`, or
   * `SANDBOX_EVALUATOR_ERROR` for the evaluator's own `err`), not retryable inside a step.
   */
  async run(component: SandboxComponent, input: string, limits?: SandboxLimits): Promise<SandboxRun> {
    if (!(component instanceof SandboxComponent)) {
      throw new TypeError('SandboxPool: the component must come from loadComponent()');
    }
    const text = parseWith(inputSchema, input, 'sandbox input', 'input');
    const resolved = resolveLimits(limits);
    this.assertOpen();
    const releasePool = await this.permits.acquire();
    try {
      const releaseProcess = await processWide.acquire();
      try {
        this.assertOpen();
        const slot = this.idle.pop();
        if (slot === undefined) throw new Error('SandboxPool: no idle thread under a held permit');
        try {
          return await this.runOn(slot, component, text, resolved);
        } finally {
          if (!this.closed) this.idle.push(slot);
        }
      } finally {
        releaseProcess();
      }
    } finally {
      releasePool();
    }
  }

  /** Terminate every thread; invocations still waiting or running fail with `SANDBOX_POOL_CLOSED`. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.slots.map((slot) => slot.stop(new SandboxPoolClosedError())));
  }

  private async runOn(
    slot: Slot,
    component: SandboxComponent,
    input: string,
    limits: Required<SandboxLimits>,
  ): Promise<SandboxRun> {
    await this.load(slot, component);
    const thread = slot.worker.threadId;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = new SandboxTimeoutError(component.sha256, limits.timeoutMs);
        reject(error);
        if (!this.closed) void slot.restart(error);
      }, limits.timeoutMs);
    });
    try {
      const request = slot.request(component.sha256, {
        type: 'invoke',
        id: 0,
        key: component.key,
        input,
        limits,
      });
      const answer = await Promise.race([request, timedOut]);
      return this.settle(component, answer, thread);
    } finally {
      clearTimeout(timer);
    }
  }

  private settle(component: SandboxComponent, answer: WorkerMessage, thread: number): SandboxRun {
    if (answer.type === 'failed') throw new SandboxTrapError(component.sha256, answer.message);
    if (answer.type !== 'outcome') throw new Error(`SandboxPool: unexpected answer ${answer.type}`);
    const outcome: InvocationOutcome = answer.outcome;
    if (!outcome.ok) throw sandboxErrorFrom(component.sha256, outcome.error);
    const { output, logs, fuelUsed, startedAt, endedAt } = outcome;
    return { output, logs, fuelUsed, startedAt, endedAt, thread };
  }

  private async load(slot: Slot, component: SandboxComponent): Promise<void> {
    await slot.started;
    if (slot.loaded.has(component.key)) return;
    const answer = await slot.request(component.sha256, {
      type: 'load',
      key: component.key,
      prepared: component.prepared,
    });
    if (answer.type !== 'loaded') {
      const reason = answer.type === 'failed' ? answer.message : answer.type;
      throw new SandboxTrapError(component.sha256, `the component could not be loaded: ${reason}`);
    }
    slot.loaded.add(component.key);
  }

  private assertOpen(): void {
    if (this.closed) throw new SandboxPoolClosedError();
  }
}
