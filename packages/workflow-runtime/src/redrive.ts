/**
 * An operator's resume of a failed or dead-lettered execution (adr/0067): under a new fence it
 * records `EXECUTION_REDRIVEN`, which reopens the failed steps the body had not gone past (each
 * runs again with a fresh retry budget), then replays the log: every completed step returns
 * its recorded output without running. `runtime.resume` runs it here; `requestResume` (the
 * client, `skein resume`) only records it, and a node takes it over once its lease lapses.
 */
import { z } from 'zod';
import { decode, encode } from './codec.js';
import { ExecutionNotFoundError, ExecutionNotResumableError, StaleFenceError } from './errors.js';
import type { EventType, RedrivenPayload } from './events.js';
import type { ExecutionState } from './fold.js';
import { executionIdSchema, newId } from './ids.js';
import { loadState } from './load-state.js';
import { lostResumeRace, resumeFence } from './resume-fence.js';
import type { FeatureDeps } from './signal-child-deps.js';
import type { EventStore, Stores } from './spi.js';
import { parseWith } from './workflow.js';

/** Options of `runtime.resume`. */
export interface ResumeOptions {
  /** Recorded with `EXECUTION_REDRIVEN` (default: `"resumed by an operator"`). */
  reason?: string;
}

/** What a resume recorded. */
export interface ResumeResult {
  executionId: string;
  /** The status it was resumed from. */
  from: 'failed' | 'dead_lettered';
  /** The failed steps that run again, by position. */
  reopened: { position: number; name: string }[];
  /** The fence `EXECUTION_REDRIVEN` was appended under (the newest; the run takes a new one). */
  fence: number;
}

const DEFAULT_REASON = 'resumed by an operator';
const optionsSchema = z.object({ reason: z.string().min(1).optional() }).optional();

/** The execution and what its resume records; refuses before anything is written. */
async function prepare(
  stores: Pick<Stores, 'events' | 'snapshots'>,
  executionId: unknown,
  options: ResumeOptions | undefined,
  load: (id: string) => Promise<ExecutionState | null>,
): Promise<{
  current: ExecutionState;
  from: RedrivenPayload['from'];
  reason: string;
  reopened: RedrivenPayload['reopened'];
}> {
  const id = parseWith(executionIdSchema, executionId, 'executionId', 'executionId');
  const reason = parseWith(optionsSchema, options, 'resume options', 'options')?.reason ?? DEFAULT_REASON;
  const current = await load(id);
  if (current === null) throw new ExecutionNotFoundError(id);
  if (current.status !== 'failed' && current.status !== 'dead_lettered')
    throw new ExecutionNotResumableError(id, current.status);
  return { current, from: current.status, reason, reopened: await reopenedSteps(stores.events, id) };
}

/**
 * The failed steps a resume runs again: walking back from the end of the log, the steps whose
 * budget ran out, up to the first other call event (a failure the body caught and went past is
 * left as it is, so the replay takes the same path).
 */
export async function reopenedSteps(
  events: EventStore,
  executionId: string,
): Promise<RedrivenPayload['reopened']> {
  const log = await events.read(executionId);
  const reopened: RedrivenPayload['reopened'] = [];
  for (let i = log.length - 1; i > 0; i--) {
    const event = log[i]!;
    const payload = decode<{ position?: unknown; name?: unknown; retryAt?: unknown }>(event.payload);
    if (typeof payload.position !== 'number') continue; // lifecycle events: the end, takeovers
    if (event.type !== 'STEP_FAILED' || payload.retryAt !== undefined) break;
    if (!reopened.some((step) => step.position === payload.position))
      reopened.unshift({ position: payload.position, name: String(payload.name) });
  }
  return reopened;
}

/**
 * `runtime.resume`: record the resume, then take the execution over under a new fence and run
 * it here in the background. Resolves once the resume is durable.
 */
export async function resumeExecution(
  deps: FeatureDeps,
  executionId: string,
  options?: ResumeOptions,
  observe?: (state: ExecutionState, resumed: ResumeResult) => void,
): Promise<ResumeResult> {
  const resumed = await requestResume(deps.stores, executionId, { ...options, clock: deps.clock });
  const current = await deps.loadState(resumed.executionId);
  if (current !== null) observe?.(current, resumed);
  // A node's recovery took it over already (it ran with no holder): that run goes on.
  if (current === null || current.sequence !== resumed.seq) return resumed;
  // An execution of a queue goes back to its queue (its item, written back when its end had
  // deleted it): the node the queue admits it to takes it over, within the limits.
  if (await deps.waitsForSlot(current)) return resumed;
  const fence = await deps.stores.events.acquireFence(current.executionId);
  const reason = 'resumed by an operator';
  const { outcome } = deps.takeOver(current, fence, [
    { type: 'EXECUTION_RECOVERED', payload: { reason, fence } },
  ]);
  outcome.catch((error: unknown) => deps.onError(error, `resumed run of execution "${current.executionId}"`));
  return resumed;
}

/**
 * Record a resume without running the body: `EXECUTION_REDRIVEN` at the next seq under the
 * newest fence, read, not acquired (adr/0016: of racing resumes the sequence decides, and
 * the loser fences nobody out). It leaves the execution running with no holder; the caller's
 * takeover (or a node's recovery, once its lease lapses) runs it under a new fence.
 * @example
 * await requestResume(stores, 'order-42', { reason: 'card service fixed' });
 */
export async function requestResume(
  stores: Pick<Stores, 'events' | 'snapshots'>,
  executionId: string,
  options: ResumeOptions & { clock?: () => number } = {},
): Promise<ResumeResult & { seq: number }> {
  const { clock, ...rest } = options;
  const { current, from, reason, reopened } = await prepare(stores, executionId, rest, (id) =>
    loadState(stores, id),
  );
  const fence = await resumeFence(stores.events, current);
  const payload: RedrivenPayload = { reason, fence, from, reopened };
  const type: EventType = 'EXECUTION_REDRIVEN';
  const seq = current.sequence + 1;
  try {
    await stores.events.append({
      executionId: current.executionId,
      workflow: current.workflow,
      expectedSeq: seq,
      fence,
      events: [{ envelopeId: newId(), type, payload: encode(payload), recordedAt: (clock ?? Date.now)() }],
    });
  } catch (error) {
    // Another resume appended first at this seq, or its run already took a newer fence (the
    // store then refuses the fence before it looks at the seq): either way it goes on, and this
    // one lost, unless the execution is somehow still failed or dead-lettered.
    if (!lostResumeRace(error, seq) && !(error instanceof StaleFenceError)) throw error;
    const summary = await stores.events.getExecution(current.executionId);
    if (
      error instanceof StaleFenceError &&
      (summary?.status === 'failed' || summary?.status === 'dead_lettered')
    )
      throw error;
    throw new ExecutionNotResumableError(current.executionId, summary?.status ?? 'unknown', { cause: error });
  }
  return { executionId: current.executionId, from, reopened, fence, seq };
}
