/** Options of the crash runner, their defaults, and their validation. */
import {
  type AnyWorkflow,
  type DeadlineOptions,
  type ExecutionState,
  openMemoryStores,
  type StartSignal,
  type Stores,
} from '@skein/workflow-runtime';
import { executionIdSchema, parseWith } from '@skein/workflow-runtime/internal';
import { z } from 'zod';
import type { Effects } from './effects.js';
import { DEFAULT_CLOCK_START } from './virtual-clock.js';

/**
 * How the kit starts the execution under test: with `signal`, by `runtime.signalWithStart` (seq 0
 * carries the signal, adr/0064); else by `runtime.start`. `timeoutMs` or `deadline` are the
 * start's deadline options: the deadline's timer row is written before seq 0 (adr/0065), and the
 * kit wakes the execution at its deadline like any due timer. Both writes are crashed at like
 * any other.
 */
export interface CrashStart extends DeadlineOptions {
  /** The signal `signalWithStart` delivers with seq 0 (default: none, a plain start). */
  signal?: StartSignal;
}

/** A workflow definition, or a factory that gets a fresh {@link Effects} counter for every run. */
export type WorkflowUnderTest = AnyWorkflow | ((effects: Effects) => AnyWorkflow);

/** Options of `crashAtEveryWrite`, `crashAt` and `referenceRun`. */
export interface CrashTestOptions {
  /** Id of the execution under test (default: `crash-test`). */
  executionId?: string;
  /** Fresh, empty stores for each run; the kit closes them (default: `openMemoryStores()`). */
  openStores?: () => Stores | Promise<Stores>;
  /** The runtimes' `snapshotEvery`; small, so crashes hit snapshot writes too (default: 3). */
  snapshotEvery?: number;
  /** Crash before the write (not applied), after it (applied, unseen), or both (default: both). */
  when?: readonly ('before' | 'after')[];
  /** Most `execute`/`wake` calls one drive may make before it counts as stuck (default: 50). */
  maxCalls?: number;
  /** The virtual clock's first reading in every run (default: 1_700_000_000_000). */
  clockStart?: number;
  /** How far the clock jumps when a wake finds its timers claimed by the dead attempt (default: 30_000, the runtime's claim TTL). */
  claimLapseMs?: number;
  /** Other workflows the execution starts as children; the kit drives those children too (default: none). */
  workflows?: readonly WorkflowUnderTest[];
  /** Signals to send, by name, when the execution suspends waiting for them; signal id = name (default: none). */
  signals?: Readonly<Record<string, unknown>>;
  /**
   * Updates to send, by name, when the execution suspends with a `ctx.onUpdate` handler for
   * them and has not applied them yet; update id = name (default: none).
   */
  updates?: Readonly<Record<string, unknown>>;
  /**
   * Resume the execution once with `runtime.resume` (an operator's re-drive, adr/0067) when it
   * ends failed or dead-lettered, and drive it on; the resume's writes are crashed like any
   * other (default: false).
   */
  resume?: boolean;
  /**
   * Start the execution with these start options (`runtime.start`, or `runtime.signalWithStart`
   * with a `signal`) instead of `runtime.execute` (default: none, `execute`). See {@link CrashStart}.
   * @example
   * await crashAtEveryWrite(cart, input, { start: { signal: { name: 'add', payload: 'apple' }, timeoutMs: 60_000 } });
   */
  start?: CrashStart;
  /**
   * Whether a recovered outcome is acceptable (default: the same status and output as the
   * uncrashed run). A workflow that races outside events (a signal against a child's end) may
   * take another branch after a crash, since the events arrive in another order; judge it by
   * what it may return instead.
   */
  outcomeAccepted?: (recovered: ExecutionState, reference: ExecutionState) => boolean;
}

/** {@link CrashTestOptions} with every default filled in. */
export interface ResolvedCrashOptions {
  executionId: string;
  openStores: () => Stores | Promise<Stores>;
  snapshotEvery: number;
  when: readonly ('before' | 'after')[];
  maxCalls: number;
  clockStart: number;
  claimLapseMs: number;
  workflows: readonly WorkflowUnderTest[];
  signals: Readonly<Record<string, unknown>>;
  updates: Readonly<Record<string, unknown>>;
  resume: boolean;
  start?: CrashStart;
  outcomeAccepted?: (recovered: ExecutionState, reference: ExecutionState) => boolean;
}

const isFunction = (value: unknown) => typeof value === 'function';
const optionsSchema = z.object({
  executionId: executionIdSchema.default('crash-test'),
  openStores: z.custom<() => Stores>(isFunction, 'expected a function').default(() => openMemoryStores),
  snapshotEvery: z.number().int().nonnegative().default(3),
  when: z
    .array(z.enum(['before', 'after']))
    .min(1)
    .default(['before', 'after']),
  maxCalls: z.number().int().positive().default(50),
  clockStart: z.number().int().nonnegative().default(DEFAULT_CLOCK_START),
  claimLapseMs: z.number().int().positive().default(30_000),
  workflows: z
    .array(z.custom<WorkflowUnderTest>((value) => value !== null && value !== undefined))
    .default([]),
  signals: z.record(z.string(), z.unknown()).default({}),
  updates: z.record(z.string(), z.unknown()).default({}),
  resume: z.boolean().default(false),
  start: z
    .object({
      signal: z
        .object({ name: z.string().min(1), payload: z.unknown(), signalId: z.string().optional() })
        .optional(),
      timeoutMs: z.number().int().positive().optional(),
      deadline: z.union([z.date(), z.number().int().nonnegative()]).optional(),
    })
    .strict()
    .refine((start) => start.timeoutMs === undefined || start.deadline === undefined, {
      message: 'give timeoutMs or deadline, not both',
      path: ['deadline'],
    })
    .optional(),
  outcomeAccepted: z
    .custom<(recovered: ExecutionState, reference: ExecutionState) => boolean>(
      isFunction,
      'expected a function',
    )
    .optional(),
});

const workflowSchema = z.union([
  z.custom<(effects: Effects) => AnyWorkflow>(isFunction, 'expected a function'),
  z
    .object({ name: z.string(), version: z.number(), run: z.custom(isFunction, 'expected a function') })
    .loose(),
]);

/** Validate and fill in the options; a bad option is refused before anything runs. */
export function resolveOptions(options: CrashTestOptions = {}): ResolvedCrashOptions {
  return parseWith(optionsSchema, options, 'crash test options', 'options') as ResolvedCrashOptions;
}

/** The definition to run, built with `effects` when the workflow under test is a factory. */
export function instantiate(workflow: WorkflowUnderTest, effects: Effects): AnyWorkflow {
  parseWith(workflowSchema, workflow, 'workflow under test', 'workflow');
  return typeof workflow === 'function' ? workflow(effects) : workflow;
}
