/**
 * `createExecutor`: the remote side of executors (docs/executors.md). It negotiates a session
 * with its hub, accepts the runs the hub hands it, records each under the binding that
 * accepted it in its own SQLite file, runs it, retains the result chosen once, and only then
 * reports it. A lost session is replaced by a new one; what earlier sessions accepted and
 * never finished stays quarantined, and their results are reconciled by the new session.
 * Node-only.
 */
import type { AnyWorkflow } from '@skein/workflow-runtime';
import { encode, parseWith } from '@skein/workflow-runtime/internal';
import { z } from 'zod';
import { secretSchema } from '../options.js';
import { secretBytes } from '../signing.js';
import { type DeliveryDeps, deliver } from './delivery.js';
import { ExecutorSession } from './executor-session.js';
import { executorIdSchema, type RunOffer } from './executor-wire.js';
import { HubClient } from './hub-client.js';
import { consoleExecutorLogger, type ExecutorLogger, loggerSchema } from './logger.js';
import {
  type Binding,
  boundTo,
  type RetainedRow,
  RetainedStore,
  type StateCounts,
} from './retained-store.js';
import { runWorkflow } from './run-workflow.js';

/** Options of {@link createExecutor}. */
export interface ExecutorOptions {
  /** This executor's id, stable across restarts (ASCII letters, digits and ". _ : -"). */
  id: string;
  /** The hub's base URL, e.g. `http://127.0.0.1:8711`. */
  hub: string | URL;
  /** The hub's shared secret, at least 32 bytes (no default: required). */
  secret: string | Uint8Array;
  /** Directory of the executor's SQLite file; created when missing. */
  stateDir: string;
  /** The workflows this executor runs. */
  workflows: readonly AnyWorkflow[];
  /** The version of the code this executor runs; a state directory written by another is refused (E6). */
  packageVersion: string;
  /** Time a delivery of one result may take, its (at most 3) attempts included, in ms (default: 10 000). */
  cleanupBudgetMs?: number;
  /** Results one reconciliation pass delivers at most, 1–32 (default: 32). */
  maxPerPass?: number;
  /** A reconciliation pass starts no delivery after this long, in ms (default: 5 000). */
  passBudgetMs?: number;
  /** How long one poll waits at the hub for work, in ms, at most 25 000 (default: 5 000). */
  pollWaitMs?: number;
  /** How long one request waits for its answer, in ms (default: 10 000). */
  requestTimeoutMs?: number;
  /** Pause between attempts to open a new session, in ms (default: 500). */
  reconnectMs?: number;
  /** How long `stop` waits for runs in progress before it closes the file, in ms (default: 5 000). */
  stopGraceMs?: number;
  /** Where sessions, counts, refusals and failures are logged (default: the console). */
  logger?: ExecutorLogger;
  /**
   * Called once a result is retained and before it is reported (default: none). A throw is
   * logged; the result stays retained.
   */
  onRetained?: (run: { executionId: string; fence: number }) => void | Promise<void>;
}

/** What `start` found: the session it opened and what the state directory holds. */
export interface StartupReport extends StateCounts, Binding {}

/** A running executor. */
export interface Executor {
  /** Open the state directory (refusing another `packageVersion`), negotiate a session, and log what it holds. */
  start(): Promise<StartupReport>;
  /** End the session, wait for the runs in progress (up to `stopGraceMs`) and close the file. */
  stop(): Promise<void>;
  /** The binding of the session held now, or null. */
  readonly session: Binding | null;
}

const optionsSchema = z.object({
  id: executorIdSchema,
  hub: z.union([z.string(), z.instanceof(URL)]).refine((url) => URL.canParse(String(url)), 'must be a URL'),
  secret: secretSchema,
  stateDir: z.string().min(1),
  workflows: z.array(
    z.custom<AnyWorkflow>(
      (value) => typeof value === 'object' && value !== null && 'name' in value,
      'must be a workflow',
    ),
  ),
  packageVersion: z.string().min(1).max(128),
  cleanupBudgetMs: z.number().int().positive().optional(),
  maxPerPass: z.number().int().min(1).max(32).optional(),
  passBudgetMs: z.number().int().positive().optional(),
  pollWaitMs: z.number().int().nonnegative().max(25_000).optional(),
  requestTimeoutMs: z.number().int().positive().optional(),
  reconnectMs: z.number().int().positive().optional(),
  stopGraceMs: z.number().int().nonnegative().optional(),
  logger: loggerSchema.optional(),
  onRetained: z.custom<ExecutorOptions['onRetained']>((value) => typeof value === 'function').optional(),
});

/**
 * Create an executor; nothing is opened before `start`.
 * @example
 * const executor = createExecutor({ id: 'exec-a', hub: 'http://127.0.0.1:8711', secret,
 *   stateDir: './exec-a', workflows: [render], packageVersion: '1.4.2' });
 * const { quarantined, unreconciled } = await executor.start();
 * // … later
 * await executor.stop();
 */
export function createExecutor(options: ExecutorOptions): Executor {
  const parsed = parseWith(optionsSchema, options, 'createExecutor options', 'options');
  return new RunningExecutor(parsed as ExecutorOptions);
}

class RunningExecutor implements Executor {
  private store: RetainedStore | null = null;
  private current: ExecutorSession | null = null;
  private stopping = false;
  private reconnecting: Promise<void> = Promise.resolve();
  private readonly runs = new Set<Promise<void>>();
  private readonly claims = new Set<string>();
  private readonly client: HubClient;
  private readonly logger: ExecutorLogger;

  constructor(private readonly options: ExecutorOptions) {
    const base = new URL(String(options.hub));
    if (!base.pathname.endsWith('/')) base.pathname = `${base.pathname}/`;
    const endpoint = {
      base,
      secret: secretBytes(options.secret),
      timeoutMs: options.requestTimeoutMs ?? 10_000,
      clock: Date.now,
    };
    this.client = new HubClient(endpoint, options.id);
    this.logger = options.logger ?? consoleExecutorLogger(`skein executor ${options.id}`);
  }

  get session(): Binding | null {
    return this.current?.live === true ? this.current.binding : null;
  }

  async start(): Promise<StartupReport> {
    if (this.store !== null) throw new Error(`executor "${this.options.id}" is already started`);
    this.stopping = false;
    this.store = RetainedStore.open(this.options.stateDir, this.options.id, this.options.packageVersion);
    try {
      const session = await this.openSession();
      const counts = this.store.counts(session.binding);
      this.logger.info('executor started', { executorId: this.options.id, ...session.binding, ...counts });
      return { ...session.binding, ...counts };
    } catch (error) {
      this.store.close();
      this.store = null;
      throw error;
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.current?.close('stopped');
    await this.reconnecting;
    // A reconnect that was under way may have opened a session meanwhile: close it too.
    await this.current?.close('stopped');
    const grace = this.options.stopGraceMs ?? 5_000;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.runs]),
      new Promise((resolve) => (timer = setTimeout(resolve, grace))),
    ]);
    clearTimeout(timer);
    if (this.runs.size > 0) {
      this.logger.warn('stopped with runs in progress; they stay quarantined', { runs: this.runs.size });
    }
    this.store?.close();
    this.store = null;
    this.current = null;
  }

  private deliveryDeps(store: RetainedStore): DeliveryDeps {
    return {
      store,
      client: this.client,
      claims: this.claims,
      cleanupBudgetMs: this.options.cleanupBudgetMs ?? 10_000,
      logger: this.logger,
    };
  }

  private async openSession(): Promise<ExecutorSession> {
    const store = this.store;
    if (store === null) throw new Error('the executor is stopped');
    const grant = await this.client.openSession(this.options.packageVersion);
    const session = new ExecutorSession(
      {
        executorId: this.options.id,
        client: this.client,
        store,
        delivery: this.deliveryDeps(store),
        bounds: {
          maxPerPass: this.options.maxPerPass ?? 32,
          passBudgetMs: this.options.passBudgetMs ?? 5_000,
        },
        logger: this.logger,
        pollWaitMs: this.options.pollWaitMs ?? 5_000,
        onRun: (offer, from) => this.accept(offer, from),
      },
      grant,
    );
    this.current = session;
    void session.finished.then((why) => {
      if (!this.stopping) this.reconnecting = this.reconnect(session, why);
    });
    return session;
  }

  /** The session ended by itself: join it, then negotiate a new one until one is granted. */
  private async reconnect(ended: ExecutorSession, why: string): Promise<void> {
    this.logger.warn('session ended; negotiating a new one', { ...ended.binding, why });
    await ended.close(why);
    while (!this.stopping && this.store !== null) {
      try {
        const session = await this.openSession();
        if (this.stopping) return await session.close('stopped');
        const counts = this.store.counts(session.binding);
        this.logger.info('executor session reopened', {
          executorId: this.options.id,
          ...session.binding,
          ...counts,
        });
        return;
      } catch (error) {
        this.logger.warn('could not open a session', { error: String(error) });
        await new Promise((resolve) => setTimeout(resolve, this.options.reconnectMs ?? 500));
      }
    }
  }

  /** Record the run under the session that accepted it, then run it. */
  private accept(offer: RunOffer, session: ExecutorSession): void {
    const store = this.store;
    if (store === null || this.stopping || !session.live) return;
    const accepted = store.accept({
      executionId: offer.executionId,
      fence: offer.fence,
      workflow: offer.workflow,
      version: offer.version,
      input: encode(offer.input),
      binding: session.binding,
      transactionId: offer.transactionId,
      acceptedAt: Date.now(),
      dueAt: offer.dueAt,
    });
    if (!accepted) return;
    const run = this.runAndRetain(store, offer).catch((error: unknown) => {
      this.logger.error('run failed outside its workflow', { executionId: offer.executionId, error });
    });
    this.runs.add(run);
    void run.finally(() => this.runs.delete(run));
  }

  private async runAndRetain(store: RetainedStore, offer: RunOffer): Promise<void> {
    store.markStarted(offer.executionId, offer.fence, Date.now());
    const chosen = await runWorkflow(this.options.workflows, offer, Date.now);
    if (!store.open) {
      this.logger.warn('result not retained: the executor stopped', { executionId: offer.executionId });
      return;
    }
    store.choose(offer.executionId, offer.fence, chosen);
    const row = store.get(offer.executionId, offer.fence);
    if (row === null) return;
    try {
      await this.options.onRetained?.({ executionId: row.executionId, fence: row.fence });
    } catch (error) {
      this.logger.error('onRetained threw', { executionId: row.executionId, error });
    }
    await this.deliverOwn(store, row);
  }

  /** Report right away when the session that accepted the run is current; else reconciliation will. */
  private async deliverOwn(store: RetainedStore, row: RetainedRow): Promise<void> {
    const session = this.current;
    if (session === null || !session.live || !boundTo(row, session.binding) || !store.open) return;
    await deliver(this.deliveryDeps(store), row, session);
  }
}
