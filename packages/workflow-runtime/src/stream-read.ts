/**
 * `runtime.readStream` (adr/0051): a durable stream is the execution's `STEP_COMPLETED` events
 * of `kind: 'stream'` with its name, each holding `{ offset, value }`. A reader pages through the
 * log in seq order, yields the entries of its stream at or past `from`, and ends at the
 * terminal event; between pages it waits a little longer each time nothing new came (a few ms,
 * doubling to `maxPollMs`). A reader that lost its connection passes the offset after the last
 * entry it got as `from` and misses nothing.
 */
import { z } from 'zod';
import type { Codec } from './codec.js';
import { optionalPositiveMs } from './durations.js';
import { ExecutionNotFoundError } from './errors.js';
import { isTerminalType, type StepCompletedPayload, type StreamEntry } from './events.js';
import { executionIdSchema, nameSchema } from './ids.js';
import type { EventStore } from './spi.js';
import { parseWith } from './workflow.js';

/** Options of `runtime.readStream`. */
export interface ReadStreamOptions {
  /** The first offset to yield (default: 0, the stream's start). */
  from?: number;
  /** Longest pause between two reads of the log while the stream has nothing new (default: 100). */
  maxPollMs?: number;
}

/** Events read per page. */
const PAGE = 256;
const FIRST_POLL_MS = 1;
const DEFAULT_MAX_POLL_MS = 100;

const requestSchema = z.object({
  executionId: executionIdSchema,
  name: nameSchema,
  from: z.number().int().min(0).optional(),
});

/** Checked at the call (refuses before anything is read); iterate the result for the entries. */
export function readStream<T = unknown>(
  events: EventStore,
  codec: Codec,
  executionId: string,
  name: string,
  options: ReadStreamOptions = {},
): AsyncIterable<StreamEntry & { value: T }> {
  const request = parseWith(
    requestSchema,
    { executionId, name, from: options.from },
    'readStream request',
    'readStream',
  );
  const maxPollMs =
    optionalPositiveMs(options.maxPollMs, 'readStream options', 'maxPollMs') ?? DEFAULT_MAX_POLL_MS;
  const from = request.from ?? 0;
  return {
    [Symbol.asyncIterator]: () =>
      entries<T>(events, codec, request.executionId, request.name, from, maxPollMs)[Symbol.asyncIterator](),
  };
}

async function* entries<T>(
  events: EventStore,
  codec: Codec,
  executionId: string,
  name: string,
  from: number,
  maxPollMs: number,
): AsyncGenerator<StreamEntry & { value: T }> {
  let seq = 0;
  let delay = FIRST_POLL_MS;
  for (;;) {
    const page = await events.read(executionId, seq, PAGE);
    if (seq === 0 && page.length === 0 && (await events.getExecution(executionId)) === null)
      throw new ExecutionNotFoundError(executionId);
    for (const event of page) {
      seq = event.seq + 1;
      if (isTerminalType(event.type)) return;
      // Only a write's text holds this; anything else is not decoded.
      if (event.type !== 'STEP_COMPLETED' || !event.payload.includes('"stream"')) continue;
      const payload = codec.decode(event.payload) as StepCompletedPayload;
      if (payload.kind !== 'stream' || payload.name !== name) continue;
      const entry = payload.output as StreamEntry;
      if (entry.offset >= from) yield { offset: entry.offset, value: entry.value as T };
    }
    if (page.length === PAGE) continue;
    if (page.length > 0) delay = FIRST_POLL_MS;
    else {
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, maxPollMs);
    }
  }
}
