/**
 * `ExecutorHub`: the central side of executors (docs/executors.md). A `WorkerRuntime` a
 * `LocalDispatcher` uses unchanged: `allocate` takes the attempt's fence from the central
 * stores, `execute` writes seq 0 under it, hands the run to an executor's live session under a
 * binding kept in the central stores, and resolves once the executor's reported result is the
 * terminal event of the central log. Executors reach it over signed HTTP, through the same
 * pipeline, limits and status codes as the HTTP worker. Node-only.
 */
import type { Server } from 'node:http';
import type { ExecutionPackage, ExecutionResult, WorkerLease, WorkerRuntime } from '@skein/worker-runtime';
import { LocalWorkerRuntime } from '@skein/worker-runtime-local';
import type { ExecutionState, Runtime } from '@skein/workflow-runtime';
import { newId, parseWith } from '@skein/workflow-runtime/internal';
import { z } from 'zod';
import { ExecutorUnavailableError, RetainedRunInspectionError } from '../errors.js';
import { wireExecutionId } from '../execution-id.js';
import {
  DEFAULT_LIMITS,
  limitsSchema,
  type ResolvedLimits,
  secretSchema,
  type WorkerLimits,
} from '../options.js';
import { closeServer, createSignedServer, listen } from '../signed-server.js';
import { secretBytes } from '../signing.js';
import { leaseRequestSchema } from '../wire.js';
import { DEFAULT_BINDING_TTL_MS, ensureStarted, recordBinding } from './central-record.js';
import { executorIdSchema, type FoundRun, type InspectionAnswer } from './executor-wire.js';
import { hubRoutes } from './hub-routes.js';
import { consoleExecutorLogger, type ExecutorLogger, loggerSchema } from './logger.js';
import { runKey } from './retained-store.js';
import { type HubSession, type SessionItem, Sessions } from './sessions.js';

/** Options of {@link ExecutorHub}. */
export interface ExecutorHubOptions {
  /** The central runtime; its stores hold the fences, the logs and the bindings. */
  runtime: Runtime;
  /** Shared secret of the HMAC signatures, at least 32 bytes (no default: required). */
  secret: string | Uint8Array;
  /** Request limits, as the HTTP worker's (default: see `WorkerLimits`). */
  limits?: WorkerLimits;
  /** How often executors heartbeat, in ms (default: 2 000). */
  heartbeatMs?: number;
  /** A session without a heartbeat for this long expires, in ms (default: 3 × `heartbeatMs`). */
  sessionTtlMs?: number;
  /** The due time a run is handed out with, ms after it is handed out (default: 60 000). */
  dueAfterMs?: number;
  /** How long a binding is kept in the central stores, in ms (default: 7 days). */
  bindingTtlMs?: number;
  /** Where sessions, refusals and failures are logged (default: the console). */
  logger?: ExecutorLogger;
  /** Milliseconds since the epoch (default: `Date.now`). */
  clock?: () => number;
}

/** What `inspectRetainedRun` found on the executor (E5). */
export type RetainedRunInspection =
  | { status: 'FOUND'; run: FoundRun }
  | { status: 'FILTERED' }
  | { status: 'ABSENT' };

/** Options of {@link ExecutorHub.inspectRetainedRun}. */
export interface InspectOptions {
  /** How long this caller waits for the answer, in ms (default: 10 000). */
  timeoutMs?: number;
  /** Stop waiting when aborted; the executor's read is not cut short. */
  signal?: AbortSignal;
}

const optionsSchema = z.object({
  runtime: z.custom<Runtime>(
    (value) => typeof value === 'object' && value !== null && 'execute' in value && 'stores' in value,
    'must be a Runtime',
  ),
  secret: secretSchema,
  limits: limitsSchema.optional(),
  heartbeatMs: z.number().int().positive().optional(),
  sessionTtlMs: z.number().int().positive().optional(),
  dueAfterMs: z.number().int().positive().optional(),
  bindingTtlMs: z.number().int().positive().optional(),
  logger: loggerSchema.optional(),
  clock: z.custom<() => number>((value) => typeof value === 'function', 'must be a function').optional(),
});

interface Waiter {
  session: HubSession;
  resolve(): void;
  reject(error: Error): void;
}

interface PendingInspection {
  executorId: string;
  executionId: string;
  /** The session the request named; only it may answer. */
  sessionId: string;
  resolve(answer: InspectionAnswer): void;
  reject(error: Error): void;
}

/**
 * Hands executions to executors and records their results in the central log.
 * @example
 * const hub = new ExecutorHub({ runtime, secret });
 * await hub.listen(8711, '127.0.0.1');
 * const dispatcher = new LocalDispatcher({ workers: hub, executeTimeoutMs: 60_000 });
 * const state = await dispatcher.dispatch({ executionId: 'render-1', workflow: 'render', input });
 */
export class ExecutorHub implements WorkerRuntime {
  private readonly runtime: Runtime;
  private readonly local: LocalWorkerRuntime;
  private readonly sessions: Sessions;
  private readonly server: Server;
  private readonly logger: ExecutorLogger;
  private readonly clock: () => number;
  private readonly dueAfterMs: number;
  private readonly bindingTtlMs: number;
  private readonly waiters = new Map<string, Waiter>();
  private readonly inspections = new Map<string, PendingInspection>();
  private readonly sweeper: NodeJS.Timeout;
  /**
   * Settles once the central runtime's in-process maintenance is off: it would claim the
   * executions this hub hands to executors and run them here (adr/0042).
   */
  private readonly maintenanceOff: Promise<void>;
  private closed = false;

  constructor(options: ExecutorHubOptions) {
    const parsed = parseWith(optionsSchema, options, 'ExecutorHub options', 'options');
    this.runtime = parsed.runtime;
    this.maintenanceOff = this.runtime.stopMaintenance();
    this.local = new LocalWorkerRuntime({ runtime: parsed.runtime });
    this.logger = parsed.logger ?? consoleExecutorLogger('skein executor hub');
    this.clock = parsed.clock ?? Date.now;
    this.dueAfterMs = parsed.dueAfterMs ?? 60_000;
    this.bindingTtlMs = parsed.bindingTtlMs ?? DEFAULT_BINDING_TTL_MS;
    const heartbeatMs = parsed.heartbeatMs ?? 2_000;
    const ttlMs = parsed.sessionTtlMs ?? 3 * heartbeatMs;
    this.sessions = new Sessions(ttlMs, this.clock, (session, untaken) =>
      this.sessionEnded(session, untaken),
    );
    const limits: ResolvedLimits = { ...DEFAULT_LIMITS, ...parsed.limits };
    this.server = createSignedServer({
      secret: secretBytes(parsed.secret),
      limits,
      logger: this.logger,
      clock: this.clock,
      routes: hubRoutes({
        runtime: this.runtime,
        sessions: this.sessions,
        logger: this.logger,
        heartbeatMs,
        ttlMs,
        settled: (executionId, fence) => this.waiters.get(runKey(executionId, fence))?.resolve(),
        answered: (executorId, requestId, answer) => this.answered(executorId, requestId, answer),
      }),
    });
    this.sweeper = setInterval(() => this.sessions.sweep(), Math.max(10, Math.floor(ttlMs / 3)));
    this.sweeper.unref();
  }

  /** This hub's incarnation; a restarted hub has a new one. */
  get incarnation(): string {
    return this.sessions.incarnation;
  }

  /**
   * Start listening; resolves with the hub's base URL.
   * @param port TCP port (default: 0, an ephemeral port).
   * @param host interface to bind (default: `127.0.0.1`).
   */
  async listen(port = 0, host = '127.0.0.1'): Promise<URL> {
    await this.maintenanceOff;
    return listen(this.server, port, host);
  }

  /** Take a new fence for this attempt, as `LocalWorkerRuntime` does (a package that cannot run is refused first). */
  allocate(pkg: ExecutionPackage): Promise<WorkerLease> {
    return this.local.allocate(pkg);
  }

  /**
   * Hand the run to an executor's live session under the lease's fence and resolve with the
   * central state once its result is recorded (or at once when the execution is terminal).
   * `ExecutorUnavailableError` when no session is live, or the session ended before it took
   * the run; a taken run is waited for across sessions, since a later session may report it.
   */
  async execute(lease: WorkerLease, pkg: ExecutionPackage): Promise<ExecutionResult> {
    const checked = parseWith(leaseRequestSchema, pkg, 'execute package', 'package');
    const { executionId } = checked;
    if (lease.executionId !== executionId) {
      throw new ExecutorUnavailableError(executionId, `the lease is for "${lease.executionId}"`);
    }
    if (this.closed) throw new ExecutorUnavailableError(executionId, 'the hub is closed');
    if ((await ensureStarted(this.runtime, checked, lease.fence)) === 'terminal')
      return this.state(executionId);
    const session = this.sessions.pick();
    if (session === undefined)
      throw new ExecutorUnavailableError(executionId, 'no executor holds a live session');
    const transactionId = `tx-${newId()}`;
    const now = this.clock();
    const record = { executorId: session.executorId, ...session.binding, fence: lease.fence, transactionId };
    await recordBinding(this.runtime, executionId, record, this.bindingTtlMs, now);
    const key = runKey(executionId, lease.fence);
    const done = new Promise<void>((resolve, reject) => this.waiters.set(key, { session, resolve, reject }));
    this.sessions.push(session, {
      kind: 'run',
      executionId,
      fence: lease.fence,
      workflow: checked.workflow,
      ...(checked.version === undefined ? {} : { version: checked.version }),
      input: checked.input,
      transactionId,
      dueAt: now + this.dueAfterMs,
    });
    try {
      await done;
    } finally {
      this.waiters.delete(key);
    }
    return this.state(executionId);
  }

  /** Stop waiting for the attempt's result (the run goes on; its report is still recorded). */
  async release(lease: WorkerLease): Promise<void> {
    const key = runKey(lease.executionId, lease.fence);
    const waiter = this.waiters.get(key);
    this.waiters.delete(key);
    waiter?.reject(new ExecutorUnavailableError(lease.executionId, 'the attempt was released'));
  }

  /** Revoke the current session of an executor; its runs stay bound to it. False when it has none live. */
  revokeSession(executorId: string): boolean {
    const revoked = this.sessions.revoke(executorId);
    if (revoked) this.logger.info('executor session revoked', { executorId });
    return revoked;
  }

  /** The binding of an executor's live session, or null. */
  currentSession(executorId: string): { incarnation: string; sessionId: string } | null {
    const session = this.sessions.live(executorId);
    return session === undefined ? null : { ...session.binding };
  }

  /**
   * Ask an executor what it retains of an execution (E5), through its current session named in
   * the request. FOUND: the newest row is of an earlier session (or has no binding), with its
   * identity, binding, transaction id, start marker and due time; FILTERED: it belongs to the
   * current session; ABSENT: there is none. Every failure is a `RetainedRunInspectionError`,
   * never ABSENT. It reads only; giving up (timeout, signal) ends only this caller's wait.
   */
  async inspectRetainedRun(
    executorId: string,
    executionId: string,
    options: InspectOptions = {},
  ): Promise<RetainedRunInspection> {
    const fail = (reason: ConstructorParameters<typeof RetainedRunInspectionError>[2], detail: string) =>
      new RetainedRunInspectionError(String(executorId), String(executionId), reason, detail);
    if (!executorIdSchema.safeParse(executorId).success)
      throw fail('malformed-id', 'the executor id is malformed');
    const id = wireExecutionId.safeParse(executionId);
    if (!id.success)
      throw fail('malformed-id', id.error.issues[0]?.message ?? 'the execution id is malformed');
    if (this.closed) throw fail('shutdown', 'the hub is closed');
    const session = this.sessions.live(executorId);
    if (session === undefined) throw fail('not-connected', 'the executor holds no live session');
    const requestId = `inspect-${newId()}`;
    const answer = await new Promise<InspectionAnswer>((resolve, reject) => {
      const timeoutMs = options.timeoutMs ?? 10_000;
      const giveUp = (why: string) => {
        this.inspections.delete(requestId);
        cleanup();
        reject(fail('gave-up', why));
      };
      const timer = setTimeout(() => giveUp(`no answer within ${timeoutMs} ms`), timeoutMs);
      const onAbort = () => giveUp('the caller aborted');
      const cleanup = () => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
      };
      if (options.signal?.aborted) return onAbort();
      options.signal?.addEventListener('abort', onAbort, { once: true });
      this.inspections.set(requestId, {
        executorId,
        executionId: id.data,
        sessionId: session.binding.sessionId,
        resolve: (value) => {
          cleanup();
          resolve(value);
        },
        reject: (error) => {
          cleanup();
          reject(error);
        },
      });
      this.sessions.push(session, {
        kind: 'inspect',
        requestId,
        executionId: id.data,
        session: session.binding,
      });
    });
    if (answer.status === 'ERROR') throw fail(answer.reason, answer.detail);
    return answer;
  }

  /** Stop: end every session, stop waiting for results and inspections, close every connection. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    this.sessions.closeAll();
    for (const [key, waiter] of this.waiters) {
      this.waiters.delete(key);
      waiter.reject(new ExecutorUnavailableError(key.slice(key.indexOf(':') + 1), 'the hub closed'));
    }
    for (const [requestId, pending] of this.inspections) {
      this.inspections.delete(requestId);
      pending.reject(
        new RetainedRunInspectionError(pending.executorId, pending.executionId, 'shutdown', 'the hub closed'),
      );
    }
    await closeServer(this.server, async () => {});
  }

  private async state(executionId: string): Promise<ExecutionState> {
    const state = await this.runtime.loadState(executionId);
    if (state === null)
      throw new ExecutorUnavailableError(executionId, 'the execution vanished from the central log');
    return state;
  }

  private answered(executorId: string, requestId: string, answer: InspectionAnswer): boolean {
    const pending = this.inspections.get(requestId);
    if (pending === undefined || pending.executorId !== executorId) return false;
    this.inspections.delete(requestId);
    pending.resolve(answer);
    return true;
  }

  /** A session ended: runs it never took are given back to their dispatchers at once. */
  private sessionEnded(session: HubSession, untaken: SessionItem[]): void {
    this.logger.info('executor session ended', {
      executorId: session.executorId,
      why: session.ended,
      ...session.binding,
    });
    // An inspection names its session: once that ends, nobody can answer it, taken or not.
    for (const [requestId, pending] of this.inspections) {
      if (pending.sessionId !== session.binding.sessionId) continue;
      this.inspections.delete(requestId);
      pending.reject(
        new RetainedRunInspectionError(
          session.executorId,
          pending.executionId,
          'not-connected',
          `the session ended (${session.ended})`,
        ),
      );
    }
    for (const item of untaken) {
      if (item.kind === 'run') {
        const waiter = this.waiters.get(runKey(item.executionId, item.fence));
        waiter?.reject(
          new ExecutorUnavailableError(
            item.executionId,
            `the session ended (${session.ended}) before it took the run`,
          ),
        );
      }
    }
  }
}
