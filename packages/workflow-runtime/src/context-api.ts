/** The `ctx` a workflow body receives. Every call is recorded and replayed by position. */
import type { ChildHandle } from './child-handle.js';
import type { Recordable } from './codec.js';
import type { FanOutCallOptions } from './fan-out-call.js';
import type { FanOutSummary } from './fan-out-settlement.js';
import type { StepRetryPolicy } from './retry-controls.js';
import type { SentSignal } from './signal-call.js';
import type { TaskDefinition } from './task.js';
import type {
  Schema,
  SignalInput,
  SignalName,
  SignalPayload,
  UpdateName,
  UpdatePayload,
  WorkflowDefinition,
  WorkflowMessages,
} from './workflow.js';

/** What a step function receives. */
export interface StepInfo {
  /** 1 for the first attempt. */
  attempt: number;
  /**
   * True when this attempt started before and its outcome was never recorded (its process died
   * or was fenced out mid-step): the side effect may have happened once already. An
   * idempotency key of `executionId`, step and attempt stays the same across such re-runs.
   */
  rerun: boolean;
  /**
   * Aborted when the attempt passes its `timeoutMs` (reason: `StepTimeoutError`), and when
   * `runtime.cancel` on the runtime running it cancels the execution (reason: `CancelledError`).
   * Honour it to stop a long step early.
   */
  signal: AbortSignal;
  executionId: string;
  /** The destination the step declared (`StepOptions.destination`); undefined when none. */
  destination?: string;
  /**
   * This attempt's share of the runtime's capacities for its destination, as it is now (read
   * it when you need it: a lowered capacity or a new competitor changes it while the step runs);
   * see docs/queues.md#destination-shares. Undefined when the step declared no destination.
   */
  share?: () => number;
}

/**
 * A step's function: `T` is inferred from what it returns, then checked to be
 * {@link Recordable} (the second half of the intersection takes no part in the inference).
 */
export type StepFunction<T> = ((info: StepInfo) => T | Promise<T>) &
  NoInfer<(info: StepInfo) => Recordable<T> | Promise<Recordable<T>>>;

/** Options of {@link WorkflowContext.step}. */
export interface StepOptions {
  /** Retry policy and its controls (default: one attempt, no retry); see docs/workflows.md#retry-controls. */
  retry?: StepRetryPolicy;
  /** An attempt that runs longer fails with `StepTimeoutError` (default: no limit). */
  timeoutMs?: number;
  /**
   * The external service the step calls (1 to 255 characters): while an attempt runs it
   * holds a share of the runtime's `destinations` capacities, `StepInfo.share()` (default: none).
   */
  destination?: string;
}

/** Options of {@link WorkflowContext.waitForSignal}. */
export interface WaitForSignalOptions<T> {
  /** Schema the payload is parsed with (default: the one declared in `defineWorkflow({ signals })`). */
  schema?: Schema<T>;
  /**
   * Give up after this many milliseconds and resolve `undefined` (default: wait forever). The
   * timeout is a durable timer: it fires after a restart too.
   */
  timeoutMs?: number;
}

/** Options of {@link WorkflowContext.child}. */
export interface ChildOptions {
  /** Id of the child execution (default: `<parent id>-child-<position>`, deterministic). */
  executionId?: string;
  /**
   * Cancel the child this many milliseconds (>= 1) after it starts, wherever it is then, even
   * across restarts (adr/0065); the parent's await then throws `ChildFailedError` (default: none).
   */
  timeoutMs?: number;
  /** Cancel the child at this instant (a `Date` or ms since the epoch) (default: none). */
  deadline?: Date | number;
}

/** A durable stream of one execution, as the body writes it (`ctx.stream(name)`). */
export interface WorkflowStream {
  /** Name of the stream. */
  readonly name: string;
  /**
   * Append `value` to the stream: it is recorded in the log at this call's position and gets
   * the next offset (0, 1, 2, … per stream). Resolves with the offset once the entry is durable,
   * and readers (`runtime.readStream`) see it. Replay writes nothing and resolves with the same
   * offset.
   */
  write(value: unknown): Promise<number>;
}

/** What `ctx.historySize()` resolves with: the log of this execution at the call. */
export interface HistorySize {
  /** Events in the log. */
  length: number;
  /** Bytes of their encoded payloads (UTF-8). */
  bytes: number;
}

/**
 * What `ctx.waitForSignal(name)` resolves with: `T` when a schema (or an explicit type
 * argument) gives one, else the payload `M` declares for `name`.
 */
export type WaitedSignal<M extends WorkflowMessages, K extends SignalName<M>, T> = [T] extends [never]
  ? SignalPayload<M, K>
  : T;

/**
 * The workflow's view of its execution. `M` is what the workflow declares (its signals), so
 * a signal name it does not declare fails to compile.
 */
export interface WorkflowContext<M extends WorkflowMessages = WorkflowMessages> {
  /** Id of this execution. */
  readonly executionId: string;
  /** Version this execution is pinned to. */
  readonly version: number;
  /**
   * Run a side effect once. Its result is recorded before the workflow moves on; on replay
   * the recorded result is returned without running `fn` again. Only an attempt in flight
   * when the process died runs a second time. `fn` must return what the log can record
   * ({@link Recordable}): a function, a symbol or an object with methods (a `URL`, a class
   * instance with methods) fails to compile.
   */
  step<T>(name: string, fn: StepFunction<T>, options?: StepOptions): Promise<T>;
  /** Durable sleep: the execution suspends and holds no worker until the timer fires. */
  sleep(name: string, ms: number): Promise<void>;
  /** Durable sleep until a point in time. */
  sleepUntil(name: string, until: Date | number): Promise<void>;
  /** The current time, recorded: replay sees the same value. */
  now(): Date;
  /** `Math.random()`, recorded. */
  random(): number;
  /** A random UUID, recorded. */
  uuid(): string;
  /**
   * True when this execution runs the code after the change named `id`: always for
   * executions that reach this point on new code, never for executions that already passed
   * it on old code.
   */
  patched(id: string): boolean;
  /**
   * Wait for the oldest signal `name` sent to this execution and not yet consumed, and
   * resolve with its payload. With `timeoutMs`, resolve `undefined` when none arrives in time.
   * While it waits the execution suspends and holds no worker; `runtime.signal` wakes it.
   * The name must be one the workflow declares (when it declares any), and the payload has
   * the declared schema's type, or `options.schema`'s; `| undefined` with `timeoutMs`.
   * @example
   * const ok = await ctx.waitForSignal('approve', { schema: z.boolean(), timeoutMs: 86_400_000 });
   * if (ok !== true) return 'rejected'; // false, or undefined on timeout
   */
  waitForSignal<T = never, K extends SignalName<M> = SignalName<M>>(
    name: K,
    options: WaitForSignalOptions<T> & { timeoutMs: number },
  ): Promise<WaitedSignal<M, K, T> | undefined>;
  waitForSignal<T = never, K extends SignalName<M> = SignalName<M>>(
    name: K,
    options?: WaitForSignalOptions<T>,
  ): Promise<WaitedSignal<M, K, T>>;
  /**
   * Publish `value` under `key`: recorded in the log at this call's position, it becomes the
   * value `runtime.getEvent(executionId, key)` returns (the latest one set under the key). The
   * promise resolves once it is durable; replay writes nothing.
   * @example
   * await ctx.setEvent('progress', { done: 3, of: 10 });
   */
  setEvent(key: string, value: unknown): Promise<void>;
  /**
   * The durable stream `name` of this execution: every `write` is recorded in order at an
   * offset, and `runtime.readStream(executionId, name, { from })` reads it, live, from any
   * offset; the stream ends when the execution does.
   * @example
   * const tokens = ctx.stream('tokens');
   * for (const token of await ctx.step('answer', () => llm(prompt))) await tokens.write(token);
   */
  stream(name: string): WorkflowStream;
  /**
   * Handle update `name` (declared in `defineWorkflow({ updates })`): each update sent with
   * `runtime.update` is applied when every branch of the body waits (at a suspension point),
   * oldest first, by calling `handler` with its payload parsed by the declared schema. The
   * handler runs in the body's turn, so it sees and may change the body's variables; what it
   * returns is recorded (`UPDATE_APPLIED`) and handed to the caller, what it throws fails that
   * update only. It must be synchronous and make no context calls (a returned promise fails
   * the update). Replay calls it again, with the same payload at the same position. Registering
   * a name again replaces the handler; updates of a name with no handler wait in the inbox.
   * @example
   * const cart: string[] = [];
   * ctx.onUpdate('add', (item: string) => { cart.push(item); return cart.length; });
   */
  onUpdate<K extends UpdateName<M>, R = unknown>(name: K, handler: (payload: UpdatePayload<M, K>) => R): void;
  /**
   * Start `workflow` as a child execution (once: replay and recovery never start a second
   * one) and return its handle: awaiting it resolves with the child's output, or rejects with
   * `ChildFailedError` when the child ends otherwise; `signal` and `cancel` reach the child
   * (typed by its declared signals). The parent suspends while it waits for the child.
   * @example
   * const review = ctx.child(approval, { doc });
   * await review.signal('assign', { reviewer: 'ana' });
   * const verdict = await review;
   */
  child<In, Out, Raw, C extends WorkflowMessages>(
    workflow: WorkflowDefinition<In, Out, Raw, C>,
    input: Raw,
    options?: ChildOptions,
  ): ChildHandle<Out, C>;
  /**
   * Send signal `name` with `payload` to another execution, recorded like a step: delivered
   * once per recorded call, also when this run crashes between the delivery and the record
   * (the signal's id is derived from this execution and the call's position, and the receiver
   * drops a second copy). Refusals (`ExecutionNotFoundError`, `ExecutionFinishedError`,
   * `UnknownSignalError`, `InvalidInputError`, `SignalInboxFullError`, …) are recorded and
   * thrown, the same on replay. Given the receiver's workflow first, the name and payload are
   * checked at compile time against its declared signals.
   * @example
   * await ctx.signal(order, 'order-42', 'approve', true);
   */
  signal<In, Out, Raw, C extends WorkflowMessages, K extends SignalName<C>>(
    workflow: WorkflowDefinition<In, Out, Raw, C>,
    executionId: string,
    name: K,
    payload: SignalInput<C, K>,
  ): Promise<SentSignal>;
  signal(executionId: string, name: string, payload: unknown): Promise<SentSignal>;
  /**
   * Fan `task` out over every item of `options.items`, in chunks worked by `FanOutWorker`s,
   * and resolve with the summary: `status: 'complete'` with the aggregate only when every
   * required item succeeded, else `'errored'` with the reasons. The log records a few events
   * whatever the number of items (docs/fan-out.md). The runtime's stores need fan-out tables.
   * @example
   * const summary = await ctx.fanOut('cases', score, {
   *   items: (from, limit) => readCases(from, limit),
   *   chunkSize: 100,
   *   aggregate: { init: () => 0, add: (sum, r) => sum + r.score },
   * });
   */
  fanOut<In, Out, Raw, A = undefined>(
    name: string,
    task: TaskDefinition<In, Out, Raw>,
    options: FanOutCallOptions<Out, A>,
  ): Promise<FanOutSummary<A>>;
  /**
   * End this execution and go on in a successor with a new, empty log: the run ends
   * `continued` (`EXECUTION_CONTINUED`), and the successor `<first id>~<n>` (n = 1, 2, … along
   * the chain) starts on the workflow's newest version with `input`, validated against that
   * version's input schema here, before anything is written. Signals sent but not consumed
   * go on to the successor; `runtime.signal`, `update` and `result` of any id of the chain reach
   * its current run. The promise never settles: nothing after the call runs.
   * @example
   * if ((await ctx.historySize()).length > 1_000) await ctx.continueAsNew({ total });
   */
  continueAsNew(input: unknown): Promise<never>;
  /**
   * The size of this execution's log at this call: events and payload bytes. Recorded, so a
   * replay gets the same values; use it to decide when to `ctx.continueAsNew`.
   */
  historySize(): Promise<HistorySize>;
}
