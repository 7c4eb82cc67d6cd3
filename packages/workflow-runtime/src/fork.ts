/**
 * `runtime.fork` (adr/0067): a new execution of the source's workflow, version and input whose
 * log starts with the source's recorded calls before the first call of step `fromStep` (copied
 * as they are, in log order), so a replay returns their outcomes without running them and the
 * body runs on from `fromStep`. Seq 0 and the copies are one append: the fork exists whole or
 * not at all. The source is only read. A fork of an execution of a queue joins the same queue,
 * partition and priority (adr/0093): seq 0 names them, then its item is written, queued, and the
 * queue admits it within its limits like any other run of the queue's executions (adr/0087).
 */
import { z } from 'zod';
import { decode, encode } from './codec.js';
import { ExecutionAlreadyExistsError, ExecutionNotFoundError, ForkRefusedError } from './errors.js';
import type { EventType, StartedPayload, StoredEvent } from './events.js';
import type { CallRecord, ExecutionState } from './fold.js';
import { executionIdSchema, newId } from './ids.js';
import { loadState } from './load-state.js';
import { queueStoreOf } from './queues/queued-enqueue.js';
import type { FeatureDeps } from './signal-child-deps.js';
import type { EventDraft, Stores } from './spi.js';
import { parseWith } from './workflow.js';

/** Options of `runtime.fork`. */
export interface ForkOptions {
  /** The step that runs again: every call before its first call keeps its recorded outcome. */
  fromStep: string;
  /** Id of the new execution (default: a new ULID); an id that exists is refused. */
  executionId?: string;
}

const optionsSchema = z.object({
  fromStep: z.string().min(1),
  executionId: executionIdSchema.optional(),
});

/** The events that record a positional call; a fork copies those before `fromStep`. */
const CALL_EVENTS: ReadonlySet<EventType> = new Set<EventType>([
  'STEP_STARTED',
  'STEP_COMPLETED',
  'STEP_FAILED',
  'TIMER_SCHEDULED',
  'TIMER_FIRED',
  'SIGNAL_RECEIVED',
  'UPDATE_APPLIED',
  'CHILD_STARTED',
  'CHILD_SETTLED',
]);

/**
 * Write the fork (one append), then run it here in the background; resolves with its id. A fork
 * in a queue is not run here: the queue admits it.
 */
export async function forkExecution(deps: FeatureDeps, sourceId: unknown, options: unknown): Promise<string> {
  const { forkId, reason, queued } = await writeFork(deps.stores, sourceId, options, {
    clock: deps.clock,
    assertRunnable: (workflow, version) => void deps.registry.get(workflow, version),
  });
  if (queued) return forkId;
  const current = await deps.loadState(forkId);
  if (current === null) throw new ExecutionNotFoundError(forkId);
  const fence = await deps.stores.events.acquireFence(forkId);
  const { outcome } = deps.takeOver(current, fence, [
    { type: 'EXECUTION_RESUMED', payload: { reason, fence } },
  ]);
  outcome.catch((error: unknown) => deps.onError(error, `run of fork "${forkId}"`));
  return forkId;
}

/**
 * Write a fork without running it (a client, a test): seq 0 and the copied calls in one
 * append. Refuses before anything is written (see `runtime.fork`). The fork is left running
 * with no holder: a node's recovery takes it over once its lease lapses, as after a crash. A
 * fork of a queue's execution gets its item after seq 0 (`queued: true`); a crash in between
 * leaves a fork whose first run writes the item back from seq 0 and waits for the queue.
 */
export async function writeFork(
  stores: Pick<Stores, 'events' | 'snapshots' | 'queues'>,
  sourceId: unknown,
  options: unknown,
  how: { clock?: () => number; assertRunnable?: (workflow: string, version: number) => void } = {},
): Promise<{ forkId: string; reason: string; queued: boolean }> {
  const id = parseWith(executionIdSchema, sourceId, 'fork source executionId', 'executionId');
  const { fromStep, executionId } = parseWith(optionsSchema, options, 'fork options', 'options');
  const clock = how.clock ?? Date.now;
  const forkId = executionId ?? newId();
  const source = await loadState(stores, id);
  if (source === null) throw new ExecutionNotFoundError(id);
  how.assertRunnable?.(source.workflow, source.version); // UnknownWorkflowError: nothing written
  const position = forkPosition(source, fromStep);
  const existing = await stores.events.getExecution(forkId);
  if (existing !== null)
    throw new ExecutionAlreadyExistsError(forkId, existing.workflow, {
      reason: 'a fork needs a new execution id',
    });
  const queues = source.queue === undefined ? undefined : queueStoreOf(stores, 'runtime.fork');
  const log = await stores.events.read(id);
  const start = startOf(log[0]!, { executionId: id, fromStep, position }, clock());
  const events = [start.draft];
  for (const event of log) if (copied(event, position)) events.push(copyOf(event, clock()));
  await stores.events.append({
    executionId: forkId,
    workflow: source.workflow,
    expectedSeq: 0,
    fence: 0,
    events,
  });
  const reason = `forked from execution "${id}" at step "${fromStep}"`;
  if (queues === undefined) return { forkId, reason, queued: false };
  const { payload } = start;
  const now = clock();
  await queues.enqueue({
    executionId: forkId,
    queue: payload.queue ?? '',
    partitionKey: payload.partitionKey ?? '',
    priority: payload.priority ?? 0,
    workflow: payload.workflow,
    version: payload.version,
    input: encode(payload.input),
    enqueuedAt: now,
    availableAt: now,
  });
  return { forkId, reason, queued: true };
}

/** The position of the first call of step `fromStep`; every call before it must have settled. */
function forkPosition(source: ExecutionState, fromStep: string): number {
  const position = source.calls.findIndex((call) => call?.kind === 'step' && call.name === fromStep);
  if (position < 0) {
    const steps = [...new Set(source.calls.filter((c) => c?.kind === 'step').map((c) => `"${c.name}"`))];
    const known = steps.length === 0 ? 'it recorded no step' : `its steps: ${steps.join(', ')}`;
    throw new ForkRefusedError(source.executionId, fromStep, `the log holds no step of that name (${known})`);
  }
  for (let i = 0; i < position; i++) {
    const call = source.calls[i];
    if (call === undefined || !settled(call)) {
      const what =
        call === undefined ? 'nothing recorded for it' : `${call.kind} "${call.name}", ${call.status}`;
      throw new ForkRefusedError(
        source.executionId,
        fromStep,
        `call ${i} before it has not settled (${what})`,
      );
    }
  }
  return position;
}

function settled(call: CallRecord): boolean {
  if (call.kind === 'child') return call.status === 'completed' || call.status === 'failed';
  return call.status === 'completed' || call.status === 'failed' || call.status === 'fired';
}

function copied(event: StoredEvent, before: number): boolean {
  if (!CALL_EVENTS.has(event.type)) return false;
  const { position } = decode<{ position?: unknown }>(event.payload);
  return typeof position === 'number' && position < before;
}

/**
 * Seq 0 of the fork: the source's workflow, version and input, its queue, partition key and
 * priority (adr/0093), and where it was forked from.
 */
function startOf(
  first: StoredEvent,
  forkedFrom: NonNullable<StartedPayload['forkedFrom']>,
  at: number,
): { draft: EventDraft; payload: StartedPayload } {
  const { workflow, version, input, queue, partitionKey, priority } = decode<StartedPayload>(first.payload);
  const payload: StartedPayload = { workflow, version, input, forkedFrom };
  if (queue !== undefined) payload.queue = queue;
  if (partitionKey !== undefined) payload.partitionKey = partitionKey;
  if (priority !== undefined) payload.priority = priority;
  const draft: EventDraft = {
    envelopeId: newId(),
    type: 'EXECUTION_STARTED',
    payload: encode(payload),
    recordedAt: at,
  };
  return { draft, payload };
}

function copyOf(event: StoredEvent, at: number): EventDraft {
  return { envelopeId: newId(), type: event.type, payload: event.payload, recordedAt: at };
}
