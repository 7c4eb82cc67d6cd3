/** `defineQueue`: a named queue and its limits (docs/queues.md). */
import { z } from 'zod';
import { InvalidInputError, UnknownQueueError } from '../errors.js';
import { nameSchema } from '../ids.js';
import { parseWith } from '../workflow.js';
import type { QueueLimits } from './queue-spi.js';

/** Options of {@link defineQueue}. */
export interface QueueOptions {
  /** Unique among the runtime's queues. */
  name: string;
  /** Executions of this queue running at once across every process (default: no limit). */
  concurrency?: number;
  /** Executions of this queue one process (one `Supervisor`) runs at once (default: no limit). */
  workerConcurrency?: number;
  /** At most `limit` executions start in any window of `periodMs` (default: no limit). */
  rateLimit?: { limit: number; periodMs: number };
  /** Executions of one `partitionKey` running at once (default: no limit per key). */
  partition?: { concurrency: number };
  /** Serve lower `priority` first; without it, `enqueue` refuses a `priority` (default: false). */
  priority?: boolean;
}

/** A queue: its name and limits, as `createRuntime({ queues })` and `enqueue({ queue })` take it. */
export interface QueueDefinition {
  readonly name: string;
  readonly limits: QueueLimits;
  readonly priority: boolean;
}

const positiveInt = z.number().int().positive();

const queueOptionsSchema = z
  .object({
    name: nameSchema,
    concurrency: positiveInt.optional(),
    workerConcurrency: positiveInt.optional(),
    rateLimit: z.object({ limit: positiveInt, periodMs: positiveInt }).strict().optional(),
    partition: z.object({ concurrency: positiveInt }).strict().optional(),
    priority: z.boolean().optional(),
  })
  .strict();

/**
 * Define a queue. Every node's `Supervisor` claims its executions within the limits, which hold
 * across every process sharing the store; register the same definition on every node.
 * @example
 * const emails = defineQueue({ name: 'emails', concurrency: 20, workerConcurrency: 5,
 *   rateLimit: { limit: 100, periodMs: 1_000 }, partition: { concurrency: 2 }, priority: true });
 * const runtime = createRuntime({ stores, workflows: [send], queues: [emails], lease: { ttlMs: 10_000 } });
 * await runtime.enqueue(send, input, { queue: emails, partitionKey: tenantId, priority: 1 });
 */
export function defineQueue(options: QueueOptions): QueueDefinition {
  const parsed = parseWith(queueOptionsSchema, options, 'defineQueue options', 'options');
  const limits: QueueLimits = {};
  if (parsed.concurrency !== undefined) limits.concurrency = parsed.concurrency;
  if (parsed.workerConcurrency !== undefined) limits.workerConcurrency = parsed.workerConcurrency;
  if (parsed.partition !== undefined) limits.partitionConcurrency = parsed.partition.concurrency;
  if (parsed.rateLimit !== undefined) limits.rateLimit = { ...parsed.rateLimit };
  return Object.freeze({
    name: parsed.name,
    limits: Object.freeze(limits),
    priority: parsed.priority ?? false,
  });
}

/** The queues of one runtime, by name. */
export class QueueRegistry {
  private readonly byName = new Map<string, QueueDefinition>();

  constructor(queues: readonly QueueDefinition[]) {
    queues.forEach((queue, i) => {
      if (this.byName.has(queue.name))
        throw new InvalidInputError('createRuntime options', [
          { path: `queues.${i}.name`, message: `repeats the queue name "${queue.name}"` },
        ]);
      this.byName.set(queue.name, queue);
    });
  }

  /** Every registered queue. */
  all(): QueueDefinition[] {
    return [...this.byName.values()];
  }

  /** The registered queue of `queue` (a definition or a name); `UnknownQueueError` otherwise. */
  get(queue: QueueDefinition | string): QueueDefinition {
    const name = typeof queue === 'string' ? queue : queue.name;
    const found = this.byName.get(name);
    if (found === undefined) throw new UnknownQueueError(name, [...this.byName.keys()]);
    return found;
  }
}
