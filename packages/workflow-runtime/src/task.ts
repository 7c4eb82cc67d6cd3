/**
 * Tasks: the work a fan-out runs once per item (docs/fan-out.md). A task is a plain async
 * function of its input, with schemas for its input and output and a retry policy; a
 * `FanOutWorker` runs it for the items of the chunks it claims.
 */
import type { z } from 'zod';
import { taskSpecSchema } from './definition-schemas.js';
import { describeThrown } from './describe-thrown.js';
import { NonRetryableError } from './errors.js';
import { checkedRetryPolicy, type RetryPolicy, resolveRetryPolicy, retryDelay } from './retry.js';
import { describeName, parseWith, type Schema } from './workflow.js';

/** What a task's `run` learns about the attempt it is. */
export interface TaskAttemptInfo {
  /** The item's attempt number, from 1. */
  attempt: number;
  /** The item's index in the fan-out. */
  index: number;
  /** The fan-out the item belongs to. */
  fanOutId: string;
  /** The worker running it. */
  workerId: string;
  /** Aborted when the worker loses the chunk or stops: stop working, the result would be refused. */
  signal: AbortSignal;
}

/**
 * What runs a sandboxed task's items: a `SandboxPool` of `@skein/sandbox-wasm`, or anything
 * that invokes a component on a text input under limits and resolves with its text output.
 */
export interface SandboxInvoker<C = unknown, L = unknown> {
  invoke(component: C, input: string, limits?: L): Promise<string>;
}

/**
 * A task whose items run as a WebAssembly component (docs/sandbox.md): the input goes in as
 * JSON, the evaluator's output comes back as JSON. A breached limit or an evaluator's refusal
 * is a `SandboxError` (a `NonRetryableError`): the item fails at once, with its code.
 */
export interface TaskSandbox<C = unknown, L = unknown> {
  /** The loaded component (`loadComponent`). */
  component: C;
  /** Limits of each invocation (default: the pool's). */
  limits?: L;
  /** The pool that runs it (`new SandboxPool({ size })`). */
  pool: SandboxInvoker<C, L>;
}

/** What {@link defineTask} takes. */
export interface TaskSpec<In, Out, Raw = In> {
  /** Unique name among the tasks a worker runs. */
  name: string;
  /** Version of the code; a fan-out records the version it was planned with (default: 1). */
  version?: number;
  /** Schema of an item; an item that fails it is refused before the fan-out is dispatched. */
  input: Schema<In, Raw>;
  /** Schema of a result; a result that fails it is a failure that is not retried (default: none). */
  output?: Schema<Out>;
  /**
   * How a failed item is retried: attempts in all, and the backoff before each next one
   * (default: 3 attempts, from 1 000 ms, doubling, at most 60 000 ms, 20 % jitter). A
   * `NonRetryableError` is never retried.
   */
  retry?: RetryPolicy;
  /** The work of one item; exactly one of `run` and `sandbox`. */
  run?(input: In, info: TaskAttemptInfo): Promise<Out>;
  /** Run each item in a sandbox instead of `run` (issue 19; docs/sandbox.md). */
  // biome-ignore lint/suspicious/noExplicitAny: the component and limit types are the sandbox package's.
  sandbox?: TaskSandbox<any, any>;
}

/** A defined task. */
export interface TaskDefinition<In = unknown, Out = unknown, Raw = In> {
  readonly name: string;
  readonly version: number;
  readonly input: Schema<In, Raw>;
  readonly output: Schema<Out> | undefined;
  /** The retry policy with every default filled in. */
  readonly retry: Required<RetryPolicy>;
  run(input: In, info: TaskAttemptInfo): Promise<Out>;
}

/** Any task definition. */
// biome-ignore lint/suspicious/noExplicitAny: variance over user input types needs the escape hatch here only.
export type AnyTask = TaskDefinition<any, any, any>;

/** Attempts of a task's item unless its policy says otherwise. */
export const DEFAULT_TASK_ATTEMPTS = 3;

/**
 * Define a task for `ctx.fanOut`. Refuses a malformed definition with `InvalidInputError`.
 * @example
 * const score = defineTask({
 *   name: 'score',
 *   input: z.object({ caseId: z.string(), text: z.string() }),
 *   output: z.object({ score: z.number() }),
 *   retry: { maxAttempts: 3, initialMs: 1_000 },
 *   async run(input) { return { score: input.text.length > 0 ? 1 : 0 }; },
 * });
 */
export function defineTask<In, Out, Raw = In>(spec: TaskSpec<In, Out, Raw>): TaskDefinition<In, Out, Raw> {
  const where = `defineTask(${describeName(spec?.name)})`;
  parseWith(taskSpecSchema, spec, where, '');
  const version = spec.version ?? 1;
  const sandbox = spec.sandbox;
  const policy = checkedRetryPolicy(spec.retry ?? {}, where);
  const retry = resolveRetryPolicy({ maxAttempts: DEFAULT_TASK_ATTEMPTS, initialMs: 1_000, ...policy });
  return Object.freeze({
    name: spec.name,
    version,
    input: spec.input,
    output: spec.output,
    retry: Object.freeze(retry),
    run: sandbox === undefined ? spec.run! : sandboxed<In, Out>(sandbox),
  });
}

/** The `run` of a sandboxed task: the input as JSON into the component, its output parsed back. */
function sandboxed<In, Out>(sandbox: TaskSandbox): (input: In) => Promise<Out> {
  return async (input) => {
    const text = await sandbox.pool.invoke(sandbox.component, JSON.stringify(input), sandbox.limits);
    try {
      return JSON.parse(text) as Out;
    } catch (error) {
      // The same artifact gives the same text again: not worth a retry.
      throw new NonRetryableError(`the sandboxed evaluator's output is not JSON: ${text.slice(0, 200)}`, {
        cause: error,
      });
    }
  };
}

/** An item's input parsed by its task's schema; throws `InvalidInputError` naming the item. */
export function parseTaskInput<In>(task: AnyTask, value: unknown, index: number): In {
  return parseWith(task.input as z.ZodType<In>, value, `task "${task.name}" item ${index}`, 'input');
}

/** What one attempt of a task came to. */
export type TaskOutcome =
  | { status: 'succeeded'; output: unknown }
  | { status: 'failed'; error: unknown; retryable: boolean };

/**
 * Run one attempt of `task` on an input: parse the input, run, parse the output. A throw is a
 * failure, retryable unless it is a `NonRetryableError` or the input or output failed its schema.
 */
export async function runTaskAttempt(
  task: AnyTask,
  input: unknown,
  info: TaskAttemptInfo,
): Promise<TaskOutcome> {
  let parsed: unknown;
  try {
    parsed = parseTaskInput(task, input, info.index);
  } catch (error) {
    return { status: 'failed', error, retryable: false };
  }
  let output: unknown;
  try {
    output = await task.run(parsed, info);
  } catch (error) {
    return { status: 'failed', error, retryable: !(error instanceof NonRetryableError) };
  }
  if (task.output === undefined) return { status: 'succeeded', output };
  try {
    return { status: 'succeeded', output: parseWith(task.output, output, `task "${task.name}"`, 'output') };
  } catch (error) {
    return { status: 'failed', error, retryable: false };
  }
}

/**
 * When a failed attempt of an item may run again: `now` plus the policy's backoff for that
 * attempt (never more than `retry.maxMs`), or null when the failure is not retryable. The
 * store ends the item once its failures reach the plan's `maxAttempts` (F5).
 */
export function taskRetryAt(
  task: AnyTask,
  attempt: number,
  retryable: boolean,
  key: string,
  now: number,
): number | null {
  if (!retryable) return null;
  return now + retryDelay(task.retry, Math.min(Math.max(1, attempt), 64), key);
}

/** A failure as the item's error text: name, message and code, bounded. */
export function describeTaskError(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  const text = typeof code === 'string' ? `${code}: ${describeThrown(error)}` : describeThrown(error);
  return text.length > 4_000 ? `${text.slice(0, 4_000)}…` : text;
}
