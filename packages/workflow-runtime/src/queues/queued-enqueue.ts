/**
 * `runtime.enqueue(wf, input, { queue, … })`: the queue item first, then seq 0 (docs/queues.md).
 * The item carries the workflow and the input, so a claimer can start the execution itself
 * should the enqueuer die between the two writes; an execution of a queue is never `pending`
 * without its item, so no node runs it outside the queue's limits.
 */
import { z } from 'zod';
import { assertPayloadSize, type Codec } from '../codec.js';
import { InvalidInputError } from '../errors.js';
import { nameSchema } from '../ids.js';
import type { Stores } from '../spi.js';
import { type AnyWorkflow, parseWith } from '../workflow.js';
import type { QueueDefinition, QueueRegistry } from './define-queue.js';
import type { QueueItem, QueueStore } from './queue-spi.js';
import type { QueuePlace } from './queued-resume.js';

/** The queue options of `enqueue` (besides `executionId`). */
export interface QueueEnqueueOptions {
  /** The queue (a definition or its name) registered with `createRuntime({ queues })`. */
  queue?: QueueDefinition | string;
  /** The partition it counts against for `partition.concurrency` and fairness (default: none, one shared partition). */
  partitionKey?: string;
  /** Lower is served first, an integer 0 … 2^31 - 1; only on a queue with `priority: true` (default: 0). */
  priority?: number;
  /** While an execution enqueued with this id in this queue is not finished, enqueue returns its handle (default: none). */
  deduplicationId?: string;
  /** Not started before this many milliseconds from now (default: 0). */
  delayMs?: number;
}

const queueEnqueueSchema = z.object({
  partitionKey: nameSchema.optional(),
  priority: z
    .number()
    .int()
    .min(0)
    .max(2 ** 31 - 1)
    .optional(),
  deduplicationId: nameSchema.optional(),
  delayMs: z.number().int().nonnegative().optional(),
});

/** What the queued enqueue needs from the runtime. */
export interface QueuedEnqueueDeps {
  stores: Stores;
  queues: QueueRegistry;
  codec: Codec;
  clock(): number;
  maxPayloadBytes: number;
}

/** True when `options` asks for any queue behaviour. */
export function usesQueue(options: QueueEnqueueOptions): boolean {
  return (
    options.queue !== undefined ||
    options.partitionKey !== undefined ||
    options.priority !== undefined ||
    options.deduplicationId !== undefined ||
    options.delayMs !== undefined
  );
}

/** The queue store of `stores`, or `InvalidInputError` naming what is missing. */
export function queueStoreOf(stores: Pick<Stores, 'queues'>, where: string): QueueStore {
  if (stores.queues === undefined)
    throw new InvalidInputError(where, [{ path: 'stores.queues', message: 'these stores keep no queues' }]);
  return stores.queues;
}

/**
 * Validate everything (L7: nothing is written on bad input), then add the item. Resolves with
 * the execution to follow: the new one, or the first one of a duplicate.
 */
export async function enqueueItem(
  deps: QueuedEnqueueDeps,
  definition: AnyWorkflow,
  rawInput: unknown,
  executionId: string,
  options: QueueEnqueueOptions,
): Promise<{ executionId: string; created: boolean; place: QueuePlace }> {
  if (options.queue === undefined)
    throw new InvalidInputError('enqueue options', [
      { path: 'options.queue', message: 'partitionKey, priority, deduplicationId and delayMs need a queue' },
    ]);
  const queue = deps.queues.get(options.queue);
  const parsed = parseWith(queueEnqueueSchema, options, 'enqueue options', 'options');
  if (parsed.priority !== undefined && !queue.priority)
    throw new InvalidInputError('enqueue options', [
      { path: 'options.priority', message: `queue "${queue.name}" was defined without priority: true` },
    ]);
  const store = queueStoreOf(deps.stores, 'enqueue');
  parseWith(definition.input, rawInput, `input of workflow "${definition.name}"`, 'input');
  const input = deps.codec.encode(rawInput);
  assertPayloadSize(executionId, `input of workflow "${definition.name}"`, input, deps.maxPayloadBytes);
  const now = deps.clock();
  const item: QueueItem = {
    executionId,
    queue: queue.name,
    partitionKey: parsed.partitionKey ?? '',
    priority: parsed.priority ?? 0,
    workflow: definition.name,
    version: definition.version,
    input,
    enqueuedAt: now,
    availableAt: now + (parsed.delayMs ?? 0),
  };
  if (parsed.deduplicationId !== undefined) item.deduplicationId = parsed.deduplicationId;
  const place = { queue: item.queue, partitionKey: item.partitionKey, priority: item.priority };
  return { ...(await store.enqueue(item)), place };
}
