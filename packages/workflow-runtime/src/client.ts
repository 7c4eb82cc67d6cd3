/**
 * A client: starts, signals, cancels and reads executions without ever running a workflow
 * body, for a process (a web tier) next to the nodes that run work (adr/0043). What it writes
 * is what those nodes already pick up: seq 0 of a `pending` execution (claimed by a
 * `Supervisor` or a runtime's maintenance), a queue item (admitted by a `Supervisor` within
 * the queue's limits), a signal in the inbox, a cancellation request, a schedule's pause.
 */
import { z } from 'zod';
import type { CancelResult } from './cancellation.js';
import type { ErrorClass } from './errors.js';
import type { Envelope } from './events.js';
import type { ExecutionState } from './fold.js';
import { type ForkOptions, writeFork } from './fork.js';
import { handleOn, isWorkflowDefinition, type UntrustedInput, type WorkflowHandle } from './handles.js';
import type { ListPage, ListQuery } from './inspection.js';
import { handOverResumed, requestCancel } from './log-requests.js';
import type { QueueDefinition } from './queues/define-queue.js';
import { queueStoreOf } from './queues/queued-enqueue.js';
import { requeueSuspended } from './queues/queued-resume.js';
import { type ResumeOptions, type ResumeResult, requestResume } from './redrive.js';
import type { ResultOptions } from './result-wait.js';
import { Runtime, type StartOptions } from './runtime.js';
import type { EnqueueOptions } from './runtime-options.js';
import type { ScheduleDefinition } from './schedules/define-schedule.js';
import { scheduleStoreOf } from './schedules/fire-schedules.js';
import type { ScheduleState } from './schedules/schedule-spi.js';
import type { SignalOptions, SignalResult } from './signal-send.js';
import type { StartSignal } from './signal-with-start.js';
import type { Stores } from './spi.js';
import type { UpdateOptions } from './update-send.js';
import {
  type AnyWorkflow,
  parseWith,
  type SignalInput,
  type SignalName,
  type UpdateInput,
  type UpdateName,
  type WorkflowDefinition,
  type WorkflowMessages,
} from './workflow.js';

/** Options of {@link createClient}. */
export interface ClientOptions {
  stores: Stores;
  /**
   * The workflows it starts, and whose signals it checks before sending (default: none; then
   * `start` refuses every workflow and `signal` refuses with `UnknownWorkflowError`).
   */
  workflows?: readonly AnyWorkflow[];
  /**
   * The queues `enqueue({ queue })` may name: the same definitions the nodes register (default:
   * none; then a `queue` is refused with `UnknownQueueError`). Needs `stores.queues`. The
   * client writes the item and seq 0; a node's `Supervisor` admits it within the limits.
   */
  queues?: readonly QueueDefinition[];
  /**
   * The schedules `pauseSchedule`, `resumeSchedule` and `scheduleState` may name (default:
   * none). Needs `stores.schedules`, and each schedule's workflow in `workflows`. A client
   * never fires them: the leader `Supervisor` does.
   */
  schedules?: readonly ScheduleDefinition[];
  /** Error classes recorded errors come back as, besides the workflows' (default: none). */
  errors?: readonly ErrorClass[];
  /** Milliseconds since the epoch (default: `Date.now`). */
  clock?: () => number;
  /** Largest encoded payload of one event in bytes (default: 1 MiB). */
  maxPayloadBytes?: number;
  /** Most signals one execution may have waiting in its inbox (default: 10 000). */
  maxPendingSignals?: number;
  /**
   * How a signal reaches an execution suspended waiting for it. `'notify'`: the inbox only;
   * the store's notification (`stores.wakeups`, PostgreSQL) makes the leader `Supervisor`
   * resume it within moments, so the supervisors must be given `wakeups`. `'log'`: also record
   * `EXECUTION_RESUMED`, and the execution is taken over once its lease lapses, by any node
   * with a supervisor or maintenance; an execution of a queue is queued again instead, and
   * resumes when its queue admits it (default: `'notify'` when `stores` has `wakeups`, else
   * `'log'`).
   */
  signalHandOff?: 'notify' | 'log';
}

const handOffSchema = z.enum(['notify', 'log']).optional();

/**
 * Starts, signals, cancels and reads executions; never runs a workflow body. See
 * {@link createClient}.
 */
export class Client {
  readonly stores: Stores;
  private readonly runtime: Runtime;
  private readonly clock: () => number;
  private readonly maxPayloadBytes: number | undefined;

  constructor(options: ClientOptions) {
    this.stores = options.stores;
    this.clock = options.clock ?? Date.now;
    this.maxPayloadBytes = options.maxPayloadBytes;
    const handOff =
      parseWith(handOffSchema, options.signalHandOff, 'createClient options', 'signalHandOff') ??
      ('wakeups' in options.stores ? 'notify' : 'log');
    // The runtime would refuse these too, but under createRuntime's name.
    if ((options.queues?.length ?? 0) > 0) queueStoreOf(options.stores, 'createClient options');
    if ((options.schedules?.length ?? 0) > 0) scheduleStoreOf(options.stores, 'createClient options');
    const { signalHandOff: _, ...rest } = options;
    this.runtime = new Runtime(
      { ...rest, workflows: options.workflows ?? [], maintenance: false },
      {
        handOffSignal: (state, name) =>
          handOff === 'notify' ? Promise.resolve(false) : this.handOver(state, name),
      },
    );
  }

  /**
   * The `'log'` hand-off. An execution of a queue holds no slot while suspended and the client
   * holds none to give it: its item is queued again, so a node resumes it once the queue admits
   * it; `EXECUTION_RESUMED` would let lease recovery run it outside the limits (adr/0056).
   */
  private async handOver(state: ExecutionState, name: string): Promise<boolean> {
    if (await requeueSuspended(this.stores, state, this.clock())) return false;
    return handOverResumed(this.stores, state, `signal "${name}" arrived`, this.clock);
  }

  /**
   * Write seq 0 and leave the execution `pending` for a node that runs `workflow` (a client
   * never runs it). Refuses bad input before anything is written; an id that exists returns a
   * handle to it. The input has the workflow's input type, or is `unknown` (untrusted data:
   * the schema validates it).
   * @example
   * const handle = await client.start(order, { sku: 'a', qty: 1 }, { executionId: 'order-42' });
   */
  start<In, Out, Raw, M extends WorkflowMessages>(
    workflow: WorkflowDefinition<In, Out, Raw, M>,
    input: Raw,
    options?: StartOptions,
  ): Promise<WorkflowHandle<Out, M>>;
  start<In, Out, Raw, M extends WorkflowMessages, I>(
    workflow: WorkflowDefinition<In, Out, Raw, M>,
    input: UntrustedInput<I>,
    options?: StartOptions,
  ): Promise<WorkflowHandle<Out, M>>;
  async start(workflow: AnyWorkflow, input: unknown, options: StartOptions = {}): Promise<WorkflowHandle> {
    const started = await this.runtime.enqueue(workflow, input, options);
    return this.handle(started.executionId);
  }

  /**
   * {@link Client.start}, and with a `queue` (one of `queues`) `runtime.enqueue`'s queue path:
   * the item and seq 0, validated first, admitted by a node's `Supervisor` within the queue's
   * limits; a `deduplicationId` whose execution is not finished returns its handle.
   * @example
   * await client.enqueue(send, input, { queue: 'emails', partitionKey: tenantId });
   */
  enqueue<In, Out, Raw, M extends WorkflowMessages>(
    workflow: WorkflowDefinition<In, Out, Raw, M>,
    input: Raw,
    options?: EnqueueOptions,
  ): Promise<WorkflowHandle<Out, M>>;
  enqueue<In, Out, Raw, M extends WorkflowMessages, I>(
    workflow: WorkflowDefinition<In, Out, Raw, M>,
    input: UntrustedInput<I>,
    options?: EnqueueOptions,
  ): Promise<WorkflowHandle<Out, M>>;
  async enqueue(
    workflow: AnyWorkflow,
    input: unknown,
    options: EnqueueOptions = {},
  ): Promise<WorkflowHandle> {
    const enqueued = await this.runtime.enqueue(workflow, input, options);
    return this.handle(enqueued.executionId);
  }

  /**
   * `runtime.signalWithStart` from a client: seq 0 carries the signal and is left `pending` for
   * a node, or the signal goes to the existing execution (handed to the nodes like `signal`).
   * @example
   * await client.signalWithStart(shop, { owner: 'ada' }, { name: 'add', payload: 'apple' }, { executionId: 'cart-ada' });
   */
  signalWithStart<In, Out, Raw, M extends WorkflowMessages, K extends SignalName<M>>(
    workflow: WorkflowDefinition<In, Out, Raw, M>,
    input: Raw,
    signal: StartSignal<M, K>,
    options?: StartOptions,
  ): Promise<WorkflowHandle<Out, M>>;
  async signalWithStart(
    workflow: AnyWorkflow,
    input: unknown,
    signal: StartSignal,
    options: StartOptions = {},
  ): Promise<WorkflowHandle> {
    const started = await this.runtime.signalWithStart(
      workflow as never,
      input as never,
      signal as never,
      options,
    );
    return this.handle(started.executionId);
  }

  /** Pause schedule `name` (one of `schedules`) on every node: no due time fires until resumed. */
  pauseSchedule(name: string): Promise<ScheduleState> {
    return this.runtime.pauseSchedule(name);
  }

  /** Resume a paused schedule; the due times that passed while it was paused do not fire. */
  resumeSchedule(name: string): Promise<ScheduleState> {
    return this.runtime.resumeSchedule(name);
  }

  /** Where schedule `name` stands: its next due time, whether it is paused, its last execution. */
  scheduleState(name: string): Promise<ScheduleState | null> {
    return this.runtime.scheduleState(name);
  }

  /**
   * Send signal `name`: checked against the workflow's declared schema and refused before
   * anything is written like `runtime.signal`, then put in the inbox and handed to the nodes
   * that run work (`signalHandOff`); `woke` is always false, since nothing runs here. Given
   * the workflow first, the name and payload are also checked at compile time.
   */
  signal<In, Out, Raw, M extends WorkflowMessages, K extends SignalName<M>>(
    workflow: WorkflowDefinition<In, Out, Raw, M>,
    executionId: string,
    name: K,
    payload: SignalInput<M, K>,
    options?: SignalOptions,
  ): Promise<SignalResult>;
  signal(executionId: string, name: string, payload: unknown, options?: SignalOptions): Promise<SignalResult>;
  signal(...args: unknown[]): Promise<SignalResult> {
    const [executionId, name, payload, options] = isWorkflowDefinition(args[0]) ? args.slice(1) : args;
    return this.runtime.signal(
      executionId as string,
      name as string,
      payload,
      (options ?? {}) as SignalOptions,
    );
  }

  /**
   * Send update `name` and wait for the handler's result: checked and refused before anything
   * is written like `runtime.update`, then put in the inbox and handed to the nodes that run
   * work (`signalHandOff`), which apply it; resolves once the log holds the result. Given the
   * workflow first, the name and payload are also checked at compile time.
   */
  update<In, Out, Raw, M extends WorkflowMessages, K extends UpdateName<M>, R = unknown>(
    workflow: WorkflowDefinition<In, Out, Raw, M>,
    executionId: string,
    name: K,
    payload: UpdateInput<M, K>,
    options?: UpdateOptions,
  ): Promise<R>;
  update<R = unknown>(
    executionId: string,
    name: string,
    payload: unknown,
    options?: UpdateOptions,
  ): Promise<R>;
  update(...args: unknown[]): Promise<unknown> {
    const [executionId, name, payload, options] = isWorkflowDefinition(args[0]) ? args.slice(1) : args;
    return this.runtime.update(
      executionId as string,
      name as string,
      payload,
      (options ?? {}) as UpdateOptions,
    );
  }

  /**
   * Record a cancellation request (`CANCEL_REQUESTED` under a fresh fence); the node that next
   * runs the execution ends it `EXECUTION_CANCELLED`. A finished execution is left alone.
   */
  cancel(executionId: string, reason: string): Promise<CancelResult> {
    return requestCancel(this.stores, executionId, reason, {
      clock: this.clock,
      maxPayloadBytes: this.maxPayloadBytes,
    });
  }

  /**
   * Record the resume of a failed or dead-lettered execution (`EXECUTION_REDRIVEN` under a new
   * fence, adr/0067); a node that runs its workflow takes it over once its lease lapses and
   * re-drives it from its log. Refuses any other status with `ExecutionNotResumableError`.
   */
  resume(executionId: string, options: ResumeOptions = {}): Promise<ResumeResult> {
    return requestResume(this.stores, executionId, { ...options, clock: this.clock });
  }

  /**
   * Write a fork of an execution (see `runtime.fork`) without running it: a node that runs its
   * workflow takes it over once its lease lapses. Resolves with a handle on the fork.
   */
  async fork(executionId: string, options: ForkOptions): Promise<WorkflowHandle> {
    const { forkId } = await writeFork(this.stores, executionId, options, { clock: this.clock });
    return this.handle(forkId);
  }

  /** The folded state of an execution; null if none. */
  loadState(executionId: string): Promise<ExecutionState | null> {
    return this.runtime.loadState(executionId);
  }

  /** The log of an execution, decoded, in seq order. */
  history(executionId: string): Promise<Envelope[]> {
    return this.runtime.history(executionId);
  }

  /** A page of executions ordered by id, filtered by status and workflow. */
  list(query: ListQuery = {}): Promise<ListPage> {
    return this.runtime.list(query);
  }

  /**
   * A handle on an execution: `result()` polls the log until it ends, `state()` reads it,
   * `signal()` sends to it. Given the workflow, all three are typed by it.
   */
  handle<In, Out, Raw, M extends WorkflowMessages>(
    workflow: WorkflowDefinition<In, Out, Raw, M>,
    executionId: string,
  ): WorkflowHandle<Out, M>;
  handle<Out = unknown>(executionId: string): WorkflowHandle<Out>;
  handle(first: string | AnyWorkflow, second?: string): WorkflowHandle {
    return handleOn(this, isWorkflowDefinition(first) ? second : first, 'handle');
  }

  /**
   * Wait for the execution to end; resolve with its output or reject with `ExecutionFailedError`
   * (`ResultTimeoutError` once `timeoutMs` passed; the execution goes on).
   */
  result<Out = unknown>(executionId: string, options: ResultOptions = {}): Promise<Out> {
    return this.runtime.result<Out>(executionId, options);
  }

  /** Refuse further calls. The stores stay open. */
  close(): Promise<void> {
    return this.runtime.close();
  }
}

/**
 * A client over `stores`: start, enqueue, signal, cancel and read executions; it never runs a
 * workflow body, so a web tier needs none of the workflows' dependencies beyond their
 * definitions.
 * @example
 * const client = createClient({ stores: await openPostgresStores({ url }), workflows: [order] });
 * await client.start(order, { sku: 'a', qty: 1 }, { executionId: 'order-42' });
 * await client.signal('order-42', 'approve', true);
 * console.log(await client.handle('order-42').result());
 */
export function createClient(options: ClientOptions): Client {
  return new Client(options);
}
