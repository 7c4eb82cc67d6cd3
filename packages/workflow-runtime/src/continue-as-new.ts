/**
 * `ctx.continueAsNew(input)` (adr/0063): the body's side. The call checks everything first
 * (the input against the workflow's newest input schema, the codec, the size limit, the
 * successor's id), so a refused call writes nothing. The run then ends: its log is flushed,
 * the successor's seq 0 is written (pending, naming this execution in `continuedFrom`), and
 * only then `EXECUTION_CONTINUED` (terminal, naming the successor). A crash between the two
 * leaves this execution running; its recovery replays to the same call, finds the successor
 * it started (the id is derived from the chain, not chosen) and writes the end.
 */
import { assertPayloadSize, encode } from './codec.js';
import { ExecutionAlreadyExistsError, InvalidInputError } from './errors.js';
import type { ContinuedFrom, ContinuedPayload } from './events.js';
import type { RunOutcome } from './execution-run.js';
import type { ExecutionState } from './fold.js';
import { executionIdSchema, MAX_EXECUTION_ID_LENGTH } from './ids.js';
import { placeOf, type QueuePlace } from './queues/queued-resume.js';
import { featuresOf, type RunInternals } from './run-internals.js';
import type { EventStore } from './spi.js';
import { type AnyWorkflow, parseWith } from './workflow.js';

/** What continue-as-new needs from the runtime (part of `RunFeatures`). */
export interface ContinuationFeatures {
  /** The log the body's `ctx.historySize()` measures. */
  events: EventStore;
  maxPayloadBytes: number;
  /** Keep this runtime's maintenance off `successorId` until its hand-over (or `release`). */
  reserve(successorId: string): void;
  release(successorId: string): void;
  /** The definition a successor of `workflow` runs: its newest registered version. */
  successorWorkflow(workflow: string): AnyWorkflow;
  /**
   * Write seq 0 of `successorId` (pending) naming `from`, or return when it exists as the
   * successor of `from.executionId`; throws `ExecutionAlreadyExistsError` for any other.
   */
  startSuccessor(
    workflow: AnyWorkflow,
    successorId: string,
    input: unknown,
    from: ContinuedFrom,
    parentId: string | undefined,
    queue: QueuePlace | undefined,
  ): Promise<void>;
}

/** A checked `ctx.continueAsNew` call, waiting for the run to end on it. */
export interface ContinueRequest {
  position: number;
  workflow: AnyWorkflow;
  successorId: string;
  input: unknown;
  from: ContinuedFrom;
  /** The parent of the chain (a child that continues keeps its parent). */
  parentId: string | undefined;
  /** The queue of the chain (the successor of a queue's execution joins the same queue, in the same place). */
  queue: QueuePlace | undefined;
}

/** Separates a chain's root id from the generation in its successors' ids (`order-1~2`). */
export const GENERATION_SEPARATOR = '~';

/** The id and chain place of the successor of the execution whose state is `state`. */
export function successorOf(state: Pick<ExecutionState, 'executionId' | 'continuedFrom'>): {
  successorId: string;
  from: ContinuedFrom;
} {
  const root = state.continuedFrom?.root ?? state.executionId;
  const generation = (state.continuedFrom?.generation ?? 0) + 1;
  return {
    successorId: `${root}${GENERATION_SEPARATOR}${generation}`,
    from: { executionId: state.executionId, root, generation },
  };
}

/** Check a `ctx.continueAsNew(input)` call and take its position; throws before anything is written. */
export function requestContinue(run: RunInternals, input: unknown): ContinueRequest {
  const { continuation } = featuresOf(run, 'ctx.continueAsNew');
  const workflow = continuation.successorWorkflow(run.workflow.name);
  const where = `ctx.continueAsNew input of workflow "${workflow.name}"`;
  const parsed = parseWith(workflow.input, input, where, 'input');
  assertPayloadSize(run.executionId, where, encode(parsed), continuation.maxPayloadBytes);
  const { successorId, from } = successorOf(run.state());
  if (!executionIdSchema.safeParse(successorId).success)
    throw new InvalidInputError('ctx.continueAsNew', [
      {
        path: 'executionId',
        message: `the successor id "${successorId}" is not a valid execution id (at most ${MAX_EXECUTION_ID_LENGTH} characters); give the chain's first execution a shorter id`,
      },
    ]);
  const { position } = run.next('continue', 'continueAsNew');
  const state = run.state();
  return {
    position,
    workflow,
    successorId,
    input: parsed,
    from,
    parentId: state.parentId,
    queue: placeOf(state),
  };
}

/**
 * End the run on `request`: the log so far, the successor's seq 0, then `EXECUTION_CONTINUED`.
 * An id taken by an execution that is not this one's successor fails the execution (`fail`).
 */
export async function endContinued(
  run: RunInternals,
  request: ContinueRequest,
  fail: (error: unknown) => Promise<RunOutcome>,
): Promise<RunOutcome> {
  const { continuation } = featuresOf(run, 'ctx.continueAsNew');
  const { workflow, successorId, input, from, parentId, queue } = request;
  // The hand-over after this run starts the successor; until then this runtime's maintenance waits.
  continuation.reserve(successorId);
  try {
    // This log (its seq 0 at least) is durable before a successor names it.
    await run.writer.flush();
    try {
      await continuation.startSuccessor(workflow, successorId, input, from, parentId, queue);
    } catch (error) {
      if (error instanceof ExecutionAlreadyExistsError) {
        continuation.release(successorId);
        return fail(error);
      }
      throw error;
    }
    const payload: ContinuedPayload = { successorId, position: request.position };
    const state = run.writer.record('EXECUTION_CONTINUED', payload, `continue as "${successorId}"`);
    await run.writer.flush();
    return { kind: 'terminal', state };
  } catch (error) {
    // Fenced out or the store failed: no hand-over here; whoever finishes the run does it.
    continuation.release(successorId);
    throw error;
  }
}
