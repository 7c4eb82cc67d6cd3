/**
 * `ctx.fanOut(name, task, options)` (docs/fan-out.md#in-a-workflow): a workflow fans a
 * dataset out and resolves with its summary, while its own log stays O(1) in the number of
 * items. It records one step that creates the fan-out (`createFanOut`, resumable under its
 * creation lease), then waits: a step asks whether every chunk is terminal, and a durable sleep
 * (a quarter second, doubling to 30 s) follows each "not yet"; then one step summarizes,
 * settles the fan-out row, and records the summary. A replay returns the recorded answers.
 */
import { z } from 'zod';
import { encode } from './codec.js';
import type { StepFunction, WorkflowContext } from './context-api.js';
import { InvalidInputError } from './errors.js';
import { createFanOut, type FanOutSource } from './fan-out-creation.js';
import {
  type FanOutAggregate,
  type FanOutSummary,
  fanOutSettled,
  summarizeFanOut,
} from './fan-out-settlement.js';
import type { FanOutStore } from './fan-out-store.js';
import type { AnyTask, TaskDefinition } from './task.js';

/** The shard a fan-out uses when it names none: the execution's own store. */
export const HOME_SHARD = 'home';

/** Options of `ctx.fanOut`. */
export interface FanOutCallOptions<Out, A> {
  /** The items: a page of at most `limit` from index `from`, stable by index; fewer ends it. */
  items: FanOutSource;
  /** Items per chunk, 1 to 10 000 (default: 100). */
  chunkSize?: number;
  /** Every item must succeed for the summary to be complete and carry the aggregate (default: true). */
  required?: boolean;
  /** Folds the succeeded results in index order (default: none). */
  aggregate?: FanOutAggregate<Out, A>;
  /** The shards the chunks are placed on, names of `createRuntime({ shards })` (default: the execution's own store). */
  shards?: readonly string[];
  /** Chunks per shard dispatched at once (default: all). */
  window?: number;
}

/** What the runtime hands `ctx.fanOut`: the stores and who it is. */
export interface FanOutCallDeps {
  /** The execution's store (the fan-out's home). */
  home: FanOutStore | undefined;
  /** The stores of the runtime's shards by name (`HOME_SHARD` is the home store). */
  shards: Readonly<Record<string, FanOutStore | undefined>>;
  /** Names this node in creation leases. */
  owner: string;
  clock: () => number;
}

const optionsSchema = z.object({
  items: z.custom<FanOutSource>(
    (value) => typeof value === 'function',
    'must be a function (from, limit) => items',
  ),
  chunkSize: z.number().int().min(1).max(10_000).optional(),
  required: z.boolean().optional(),
  aggregate: z
    .object({
      init: z.custom<() => unknown>((v) => typeof v === 'function', 'must be a function'),
      add: z.custom<() => unknown>((v) => typeof v === 'function', 'must be a function'),
    })
    .optional(),
  shards: z.array(z.string().min(1)).min(1).optional(),
  window: z.number().int().min(1).optional(),
});

/** Longest wait between two checks, in ms. */
const MAX_WAIT_MS = 30_000;

/** Run `ctx.fanOut`; see the module comment. */
export async function fanOutCall<In, Out, Raw, A>(
  ctx: Pick<WorkflowContext, 'executionId' | 'step' | 'sleep'>,
  deps: FanOutCallDeps,
  name: string,
  task: TaskDefinition<In, Out, Raw>,
  options: FanOutCallOptions<Out, A>,
): Promise<FanOutSummary<A>> {
  const where = `ctx.fanOut("${name}")`;
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success)
    throw new InvalidInputError(
      where,
      parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message })),
    );
  if (typeof task?.run !== 'function' || typeof task.input?.safeParse !== 'function')
    throw new InvalidInputError(where, [{ path: 'task', message: 'must be a task of defineTask' }]);
  const shardNames = options.shards ?? [HOME_SHARD];
  const shards = storesOf(deps, shardNames, where);
  const home = deps.home;
  if (home === undefined)
    throw new InvalidInputError(where, [
      { path: 'stores', message: 'the runtime\u2019s stores have no fan-out tables (stores.fanOuts)' },
    ]);
  const required = options.required ?? true;
  const plan = {
    fanOutId: `${ctx.executionId}:fanout:${name}`,
    executionId: ctx.executionId,
    name,
    task: task.name,
    taskVersion: task.version,
    chunkSize: options.chunkSize ?? 100,
    shards: shardNames,
    required,
    maxAttempts: task.retry.maxAttempts,
  };
  const created = await ctx.step(`fanout:${name}:create`, async () => {
    const row = await createFanOut({
      home,
      shards,
      plan,
      task: task as AnyTask,
      items: options.items,
      owner: deps.owner,
      clock: deps.clock,
      ...(options.window === undefined ? {} : { window: options.window }),
    });
    return { total: row.total ?? 0, status: row.status, error: row.error };
  });
  if (created.status === 'failed')
    throw new InvalidInputError(where, [{ path: 'fanOut', message: created.error ?? 'the fan-out failed' }]);
  for (let check = 0; ; check += 1) {
    const settled = await ctx.step(`fanout:${name}:check:${check}`, () =>
      fanOutSettled(plan.fanOutId, shards, created.total, plan.chunkSize),
    );
    if (settled) break;
    await ctx.sleep(`fanout:${name}:wait:${check}`, Math.min(MAX_WAIT_MS, 250 * 2 ** Math.min(check, 10)));
  }
  // The aggregate is the user's reducer output, checked by the codec when recorded; its generic
  // type cannot be proven Recordable here.
  return ctx.step<FanOutSummary<A>>(`fanout:${name}:settle`, (async () => {
    const summary = await summarizeFanOut<Out, A>({
      fanOutId: plan.fanOutId,
      shards,
      required,
      total: created.total,
      ...(options.aggregate === undefined ? {} : { aggregate: options.aggregate }),
    });
    await home.settle(plan.fanOutId, encode(summary), deps.clock());
    return summary;
  }) as StepFunction<FanOutSummary<A>>);
}

function storesOf(
  deps: FanOutCallDeps,
  names: readonly string[],
  where: string,
): Record<string, FanOutStore> {
  const stores: Record<string, FanOutStore> = {};
  for (const [i, shard] of names.entries()) {
    const store = deps.shards[shard];
    if (store === undefined) {
      const known = Object.keys(deps.shards).join(', ');
      throw new InvalidInputError(where, [
        { path: `shards[${i}]`, message: `"${shard}" is not a shard of the runtime (shards: ${known})` },
      ]);
    }
    stores[shard] = store;
  }
  return stores;
}
