/** `RemoteWorkerRuntime`: the {@link WorkerRuntime} of a worker reached over HTTP (docs/architecture.md#http-worker). */
import type { ExecutionPackage, ExecutionResult, WorkerLease, WorkerRuntime } from '@skein/worker-runtime';
import { type ExecutionState, InvalidInputError } from '@skein/workflow-runtime';
import { decode, encode, parseWith } from '@skein/workflow-runtime/internal';
import { z } from 'zod';
import { answerError } from './answers.js';
import { RemoteProtocolError, RemoteWorkerError } from './errors.js';
import { wireExecutionId } from './execution-id.js';
import { secretSchema } from './options.js';
import { secretBytes } from './signing.js';
import { wellFormedTraceparent } from './trace-context.js';
import { type Endpoint, type RawAnswer, send } from './transport.js';
import { leaseAnswerSchema, leaseRequestSchema, WireCodes } from './wire.js';

/** Options of {@link RemoteWorkerRuntime}. */
export interface RemoteWorkerRuntimeOptions {
  /** Base URL of the worker, as `worker.listen` resolved it, e.g. `http://10.0.0.5:8080/`. */
  url: string | URL;
  /** The worker's shared secret, at least 32 bytes (no default: required). */
  secret: string | Uint8Array;
  /**
   * How long to wait for one answer in ms (default: 30 000). Past it the request fails with
   * `RemoteTimeoutError` while the worker may run on; a redispatch joins that run. Keep it
   * under 300 000: the global `fetch` gives up waiting for an answer's headers after 300 s.
   */
  timeoutMs?: number;
  /** Milliseconds since the epoch, for request timestamps (default: `Date.now`). */
  clock?: () => number;
  /**
   * The W3C `traceparent` to send with an execution's requests, asked before each one
   * (default: none). `@skein/opentelemetry`'s `callerTraceparent` sends the caller's active
   * span, or else the execution's own span. A malformed answer is not sent.
   */
  traceparent?: (executionId: string) => string | undefined;
}

const optionsSchema = z.object({
  url: z.union([z.string(), z.instanceof(URL)]).refine((url) => URL.canParse(String(url)), 'must be a URL'),
  secret: secretSchema,
  timeoutMs: z.number().int().positive().optional(),
  clock: z.custom<() => number>((value) => typeof value === 'function', 'must be a function').optional(),
  traceparent: z
    .custom<(executionId: string) => string | undefined>(
      (value) => typeof value === 'function',
      'must be a function',
    )
    .optional(),
});

const leaseSchema = z.object({ executionId: wireExecutionId, fence: z.number().int().nonnegative() });

/**
 * Runs executions on a worker created with `createHttpWorker`. `allocate` asks the worker for
 * a fence (`POST /v1/leases`), `execute` sends the package with the lease's fence
 * (`POST /v1/executions`), `release` needs no round trip (a fence is never given back).
 * A 409 becomes `ExecutionSupersededError` only when its code is `superseded` and it names
 * the requested execution.
 * @example
 * const remote = new RemoteWorkerRuntime({ url, secret, timeoutMs: 30_000 });
 * const dispatcher = new LocalDispatcher({ workers: remote, executeTimeoutMs: 30_000, maxAttempts: 3 });
 */
export class RemoteWorkerRuntime implements WorkerRuntime {
  private readonly endpoint: Endpoint;
  private readonly traceparent: ((executionId: string) => string | undefined) | undefined;

  constructor(options: RemoteWorkerRuntimeOptions) {
    const parsed = parseWith(optionsSchema, options, 'RemoteWorkerRuntime options', 'options');
    const base = new URL(String(parsed.url));
    if (!base.pathname.endsWith('/')) base.pathname = `${base.pathname}/`;
    this.endpoint = {
      base,
      secret: secretBytes(parsed.secret),
      timeoutMs: parsed.timeoutMs ?? 30_000,
      clock: parsed.clock ?? Date.now,
    };
    this.traceparent = parsed.traceparent;
  }

  /** Ask the worker for this attempt's fence. */
  async allocate(pkg: ExecutionPackage): Promise<WorkerLease> {
    const checked = parseWith(leaseRequestSchema, pkg, 'allocate package', 'package');
    const answer = await this.post('v1/leases', checked, checked.executionId);
    const lease = this.json(answer, checked.executionId, leaseAnswerSchema);
    if (lease.executionId !== checked.executionId) {
      throw new RemoteProtocolError(checked.executionId, this.origin, `lease names "${lease.executionId}"`);
    }
    return lease;
  }

  /** Execute on the worker under the lease's fence; resolves terminal or suspended. */
  async execute(lease: WorkerLease, pkg: ExecutionPackage): Promise<ExecutionResult> {
    const checked = parseWith(leaseRequestSchema, pkg, 'execute package', 'package');
    const { fence, executionId } = parseWith(leaseSchema, lease, 'execute lease', 'lease');
    if (executionId !== checked.executionId) {
      throw new InvalidInputError('execute lease', [
        {
          path: 'lease.executionId',
          message: `is "${executionId}", the package is "${checked.executionId}"`,
        },
      ]);
    }
    const answer = await this.post('v1/executions', { ...checked, fence }, executionId);
    return this.state(answer, executionId);
  }

  /** Nothing to give back: a newer attempt's fence supersedes this one. */
  async release(_lease: WorkerLease): Promise<void> {}

  /** The execution's current state on the worker's stores, or null when it does not exist. */
  async getExecution(executionId: string): Promise<ExecutionState | null> {
    const id = parseWith(wireExecutionId, executionId, 'executionId', 'executionId');
    const answer = await send(this.endpoint, {
      method: 'GET',
      path: `v1/executions/${encodeURIComponent(id)}`,
      executionId: id,
    });
    if (answer.status === 404) {
      const error = answerError(answer, id, this.origin);
      if (error instanceof RemoteWorkerError && error.remoteCode === WireCodes.NotFound) return null;
      throw error;
    }
    return this.state(answer, id);
  }

  private get origin(): string {
    return this.endpoint.base.origin;
  }

  private post(path: string, body: unknown, executionId: string): Promise<RawAnswer> {
    const traceparent = wellFormedTraceparent(this.callerOf(executionId));
    return send(this.endpoint, {
      method: 'POST',
      path,
      body: encode(body),
      executionId,
      ...(traceparent === undefined ? {} : { traceparent }),
    });
  }

  /** The hook's traceparent; a hook that throws sends none (tracing never fails a dispatch). */
  private callerOf(executionId: string): string | undefined {
    try {
      return this.traceparent?.(executionId);
    } catch {
      return undefined;
    }
  }

  private state(answer: RawAnswer, executionId: string): ExecutionState {
    if (answer.status !== 200) throw answerError(answer, executionId, this.origin);
    try {
      const state = decode<ExecutionState>(answer.text);
      if (state?.executionId !== executionId)
        throw new Error(`the state names "${String(state?.executionId)}"`);
      return state;
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new RemoteProtocolError(executionId, this.origin, reason, { cause: error });
    }
  }

  private json<T>(answer: RawAnswer, executionId: string, schema: z.ZodType<T>): T {
    if (answer.status !== 200) throw answerError(answer, executionId, this.origin);
    try {
      return schema.parse(JSON.parse(answer.text));
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new RemoteProtocolError(executionId, this.origin, reason, { cause: error });
    }
  }
}
