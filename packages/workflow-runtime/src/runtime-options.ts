/** The runtime's public option and handle types, and the schemas its entry points validate with. */
import { z } from 'zod';
import type { DeadlineOptions } from './deadlines.js';
import type { DestinationOptions } from './destination-shares.js';
import type { ErrorClass } from './errors.js';
import { executionIdSchema, nameSchema } from './ids.js';
import type { LeaseOptions } from './leases.js';
import type { MaintenanceOptions } from './maintenance.js';
import type { RuntimeObserver } from './observers.js';
import type { OutboxHeadersHook } from './outbox-headers.js';
import type { QueueDefinition } from './queues/define-queue.js';
import type { QueueEnqueueOptions } from './queues/queued-enqueue.js';
import type { CacheOptions } from './resident-bodies.js';
import type { ScheduleDefinition } from './schedules/define-schedule.js';
import type { PendingTakeover, Stores } from './spi.js';
import type { AnyWorkflow } from './workflow.js';

/** Options of {@link createRuntime}. */
export interface RuntimeOptions {
  stores: Stores;
  /** Every workflow (and version) this runtime may run. */
  workflows: readonly AnyWorkflow[];
  /**
   * Error classes of your own that recorded errors come back as, besides those the workflows
   * register with `defineWorkflow({ errors })` (default: none; see docs/errors.md).
   */
  errors?: readonly ErrorClass[];
  /** Save a snapshot every this many events (default: 100; 0 turns snapshots off). */
  snapshotEvery?: number;
  /** Largest encoded payload of one event in bytes (default: 1 MiB). */
  maxPayloadBytes?: number;
  /** Milliseconds since the epoch (default: `Date.now`). Tests inject a clock. */
  clock?: () => number;
  /** Name of this node in timer claims and leases (default: a new ULID). */
  nodeId?: string;
  /** Where errors of background work (timer wake-ups, snapshots) go (default: `console.error`). */
  onError?: (error: unknown, context: string) => void;
  /**
   * Keep a lease per running execution in `stores.leases` (key `execution:<id>`), renewed by
   * a timer while the run lasts, so a supervisor on any node can tell a dead owner's work
   * (default: on with a TTL of 30 000 while `maintenance` is on; off with `maintenance: false`
   * and no `lease`). See `docs/supervision.md`.
   */
  lease?: LeaseOptions;
  /**
   * In-process maintenance, so a restarted process picks its work back up with no
   * `Supervisor`: right after creation and then every `intervalMs`, due timers fire, pending
   * executions run, and running ones whose lease expired (their process died) are taken over,
   * each claimed in the stores first so processes sharing them never run one twice. It keeps
   * execution leases (`lease`, default TTL) so this runtime's own long runs are not taken
   * over. On by default for workflows this runtime runs; `false` for a process that leaves the
   * work to `Supervisor`s elsewhere (a `Supervisor` given this runtime turns it off itself).
   * See `docs/supervision.md` (default: `{ intervalMs: 1_000, concurrency: 10 }`).
   */
  maintenance?: MaintenanceOptions | false;
  /**
   * How often a parent waiting in `ctx.child` re-checks its child, should the child's wake-up
   * be lost (a crash between the child's end and the wake-up): the bound on how late the
   * parent notices, given a node that fires its timers (default: 60 000).
   */
  childRecheckMs?: number;
  /**
   * Most signals one execution may have waiting in its inbox, an integer >= 1: past it
   * `runtime.signal` refuses with `SignalInboxFullError` and writes nothing, so a sender cannot
   * grow an execution's inbox without bound (default: 10 000, `DEFAULT_MAX_PENDING_SIGNALS`).
   */
  maxPendingSignals?: number;
  /**
   * Told of executions, steps that ran, timers, signals, children, cancellations and dead
   * letters once they are durable, without payloads unless an observer asks (default: none,
   * and then the runtime keeps no record for them). See `RuntimeObserver`.
   */
  observers?: readonly RuntimeObserver[];
  /**
   * Queues `enqueue({ queue })` may name, with their limits; `Supervisor`s claim their
   * executions within them. Needs stores that keep queues (`stores.queues`; default: none).
   * See `docs/queues.md`.
   */
  queues?: readonly QueueDefinition[];
  /**
   * Capacities the running steps that declared a destination share: runtime-wide and per
   * destination (default: none, every share is unlimited). Changed later through
   * `runtime.destinations`. See `docs/queues.md#destination-shares`.
   */
  destinations?: DestinationOptions;
  /**
   * Schedules the leader `Supervisor` fires, one execution per due time across every node.
   * Needs stores that keep schedules (`stores.schedules`; default: none). See `docs/schedules.md`.
   */
  schedules?: readonly ScheduleDefinition[];
  /**
   * Write an `execution.pending` message to the store's outbox with every `enqueue`, in the
   * same append as seq 0 (O1), so a `Supervisor({ transport })` hears of new work through the
   * transport; the stores must have an outbox (`stores.outbox`) (default: false). See
   * `docs/outbox.md`.
   */
  outbox?: boolean;
  /**
   * Asked, with `outbox: true`, for the headers each enqueue's `execution.pending` message
   * carries, written with it in the same append: the enqueuer's W3C trace context
   * (`callerTraceHeaders` of `@skein/opentelemetry`), which a `Supervisor({ onTraceparent })`
   * continues. A hook that throws writes no headers; headers that are not well-formed refuse
   * the enqueue before anything is written (default: none). See `docs/outbox.md#headers`.
   */
  outboxHeaders?: OutboxHeadersHook;
  /**
   * Stores that fan-out chunks may be placed on, by shard name, besides the runtime's own
   * (`HOME_SHARD`, `'home'`); each needs fan-out tables (`stores.fanOuts`). `ctx.fanOut(…, {
   * shards: ['a', 'b'] })` names them (default: none; see docs/fan-out.md#placement).
   */
  shards?: Readonly<Record<string, Pick<Stores, 'fanOuts'>>>;
  /**
   * Keep the bodies of executions that suspended here in memory, up to `maxResident` of them
   * (least recently suspended dropped first), so a resume here goes on from where the body
   * waits instead of replaying its log; a log another process wrote meanwhile is replayed as
   * usual (default: `{ maxResident: 1_000 }`; `{ maxResident: 0 }` turns it off). See
   * `docs/performance.md#resident-bodies`.
   */
  cache?: CacheOptions;
}

/** Options of `execute` (dispatch and worker runtimes pass them; see `docs/dispatch.md`). */
export interface ExecuteOptions {
  /**
   * Fence to append with, taken by the caller (a worker lease): a new execution starts under
   * it, a takeover uses it instead of acquiring one, and a start fenced out under it fails
   * with `StartFencedOutError` instead of being retried (default: the runtime's own fences).
   */
  fence?: number;
  /**
   * Refuse with `ExecutionAlreadyExistsError` when the execution exists, instead of taking it
   * over: the retry of a start that was fenced out, whose winner now owns it (default: false).
   */
  startOnly?: boolean;
  /**
   * What the caller claimed the execution in (a supervisor's claim of a pending one): act only
   * when the folded execution is still in this status, and at this sequence when given;
   * otherwise resolve with its state and write nothing. The fold is the re-read right before
   * acting, so the claim costs no read of its own (default: any status).
   */
  expect?: { status: 'pending' | 'running'; sequence?: number };
  /**
   * The caller expects the execution to exist (a queue's claim of its item, which carries the
   * input): fold it first, and write seq 0 from `input` only when it is missing, instead of
   * trying seq 0 first. The caller holds the execution's queue slot (it just took it), so the
   * run does not look it up again (default: false).
   */
  existing?: boolean;
  /**
   * The execution as `EventStore.takeOverPending` returned it to the caller (a supervisor's
   * batched claim): run it under that fence from that log, without reading the store. When the
   * log does not fold to a pending execution, resolve with its state and write nothing. Not
   * with `fence`, `startOnly` or `expect`; with `existing`, the caller holds the execution's
   * queue slot (a queue's claim that took its items over together), so the run does not look
   * it up again (default: none).
   */
  takeover?: PendingTakeover;
}

/** What `execute` runs: which execution, of which workflow, with which input. */
export interface ExecuteRequest {
  executionId: string;
  workflow: string;
  input?: unknown;
  /** Version to start with when the execution does not exist yet (default: the newest registered). */
  version?: number;
}

/** Options of `start` and `enqueue`; `timeoutMs` / `deadline` cancel it when they pass (adr/0065). */
export interface StartOptions extends DeadlineOptions {
  /** Id of the execution (default: a new ULID). Starting an id that exists returns a handle to it. */
  executionId?: string;
  /**
   * Refuse with `ExecutionInputMismatchError` when `executionId` already exists with another
   * input, instead of returning a handle to the old execution (default: false). Inputs are
   * compared as the workflow's schema parses them, as recorded.
   */
  strict?: boolean;
}

/** Options of `enqueue`: those of `start`, and the queue ones (docs/queues.md). */
export interface EnqueueOptions extends StartOptions, QueueEnqueueOptions {}

export type { WorkflowHandle } from './handles.js';

export const executeRequestSchema = z.object({
  executionId: executionIdSchema,
  workflow: nameSchema,
  input: z.unknown().optional(),
  version: z.number().int().positive().optional(),
});

export { executionIdSchema };

export const startOptionsSchema = z.object({
  executionId: executionIdSchema.optional(),
  strict: z.boolean().optional(),
});

export const executeOptionsSchema = z.object({
  fence: z.number().int().nonnegative().optional(),
  startOnly: z.boolean().optional(),
  expect: z
    .object({ status: z.enum(['pending', 'running']), sequence: z.number().int().nonnegative().optional() })
    .strict()
    .optional(),
  existing: z.boolean().optional(),
  takeover: z
    .object({
      executionId: z.string(),
      fence: z.number().int().positive(),
      events: z.array(
        z.looseObject({ executionId: z.string(), seq: z.number().int().nonnegative(), type: z.string() }),
      ),
    })
    .strict()
    .optional(),
});
