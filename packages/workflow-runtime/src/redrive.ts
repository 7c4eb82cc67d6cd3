/**
 * An operator's resume of a failed or dead-lettered execution (adr/0067): under a new fence it
 * records `EXECUTION_REDRIVEN`, which reopens the failed steps the body had not gone past (each
 * runs again with a fresh retry budget), then replays the log: every completed step returns
 * its recorded output without running. `runtime.resume` runs it here; `requestResume` (the
 * client, `skein resume`) only records it, and a node takes it over once its lease lapses.
 */
import { z } from 'zod';
import { decode, encode } from './codec.js';
import { ExecutionNotFoundError, ExecutionNotResumableError } from './errors.js';
import type { EventType, RedrivenPayload } from './events.js';
import type { ExecutionState } from './fold.js';
import { executionIdSchema, newId } from './ids.js';
import { loadState } from './load-state.js';
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
  /** The fence the resume took it over with. */
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
 * `runtime.resume`: record `EXECUTION_REDRIVEN` under a new fence and run the execution here
 * in the background. Resolves once the record is durable.
 */
export async function resumeExecution(
  deps: FeatureDeps,
  executionId: string,
  options?: ResumeOptions,
): Promise<ResumeResult> {
  const { current, from, reason, reopened } = await prepare(
    deps.stores,
    executionId,
    options,
    deps.loadState,
  );
  const fence = await deps.stores.events.acquireFence(current.executionId);
  const payload: RedrivenPayload = { reason, fence, from, reopened };
  const { firstAppend, outcome } = deps.takeOver(current, fence, [{ type: 'EXECUTION_REDRIVEN', payload }]);
  try {
    await firstAppend;
  } catch (error) {
    throw await lostRace(deps.stores, current.executionId, error);
  }
  outcome.catch((error: unknown) => deps.onError(error, `resumed run of execution "${current.executionId}"`));
  return { executionId: current.executionId, from, reopened, fence };
}

/**
 * Record a resume without running the body (a client, `skein resume`): `EXECUTION_REDRIVEN`
 * under a new fence leaves the execution running with no holder, which a node's recovery
 * takes over once its lease lapses (adr/0028).
 * @example
 * await requestResume(stores, 'order-42', { reason: 'card service fixed' });
 */
export async function requestResume(
  stores: Pick<Stores, 'events' | 'snapshots'>,
  executionId: string,
  options: ResumeOptions & { clock?: () => number } = {},
): Promise<ResumeResult> {
  const { clock, ...rest } = options;
  const { current, from, reason, reopened } = await prepare(stores, executionId, rest, (id) =>
    loadState(stores, id),
  );
  const fence = await stores.events.acquireFence(current.executionId);
  const payload: RedrivenPayload = { reason, fence, from, reopened };
  const type: EventType = 'EXECUTION_REDRIVEN';
  try {
    await stores.events.append({
      executionId: current.executionId,
      workflow: current.workflow,
      expectedSeq: current.sequence + 1,
      fence,
      events: [{ envelopeId: newId(), type, payload: encode(payload), recordedAt: (clock ?? Date.now)() }],
    });
  } catch (error) {
    throw await lostRace(stores, current.executionId, error);
  }
  return { executionId: current.executionId, from, reopened, fence };
}

/** A resume whose append failed: another resume won (it is no longer resumable), else the store's error. */
async function lostRace(
  stores: Pick<Stores, 'events'>,
  executionId: string,
  error: unknown,
): Promise<unknown> {
  const summary = await stores.events.getExecution(executionId).catch(() => null);
  if (summary !== null && summary.status !== 'failed' && summary.status !== 'dead_lettered')
    return new ExecutionNotResumableError(executionId, summary.status);
  return error;
}
