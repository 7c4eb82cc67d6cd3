/**
 * Requests from a process that does not run the workflow (the `skein` CLI, its web
 * inspector, a web tier): cancel an execution and send it a signal by writing the log and the
 * inbox only, never running a body. They leave exactly the log that `runtime.cancel` or a
 * resume leaves when its process dies right after the write, so the nodes that run the
 * workflow finish the work through the paths they already have (adr/0028): a `Supervisor`
 * claims pending work at its next tick and takes over running work once its lease lapses.
 */
import { z } from 'zod';
import type { CancelResult } from './cancellation.js';
import { assertPayloadSize, DEFAULT_MAX_PAYLOAD_BYTES, encode } from './codec.js';
import { currentRun } from './continuation-chain.js';
import { ExecutionFinishedError, ExecutionNotFoundError } from './errors.js';
import { type EventType, isTerminalStatus } from './events.js';
import type { ExecutionState } from './fold.js';
import { executionIdSchema, MAX_EXECUTION_ID_LENGTH, newId } from './ids.js';
import { loadState } from './load-state.js';
import { requeueSuspended } from './queues/queued-resume.js';
import { resumeFence } from './resume-fence.js';
import type { Stores } from './spi.js';
import { parseWith } from './workflow.js';

/** Options of {@link requestCancel} and {@link deliverSignal}. */
export interface LogRequestOptions {
  /** Milliseconds since the epoch (default: `Date.now`). */
  clock?: () => number;
  /** Largest encoded payload in bytes (default: 1 MiB). */
  maxPayloadBytes?: number;
}

/** Options of {@link deliverSignal}. */
export interface DeliverSignalOptions extends LogRequestOptions {
  /** Id of the signal (default: a new ULID); sending an id again is a no-op. */
  signalId?: string;
}

/** What {@link deliverSignal} did. */
export interface DeliveredSignal {
  signalId: string;
  /** False when the log had already consumed this `signalId`; nothing was written. */
  accepted: boolean;
  /** True when the execution was suspended waiting for this name and was handed to the nodes that run it. */
  handedOver: boolean;
  /** Signal names the execution waits for now (empty when it waits for none). */
  waitingFor: string[];
}

/** A caller's signal id: 1 to {@link MAX_EXECUTION_ID_LENGTH} characters. */
const signalIdSchema = z.string().min(1).max(MAX_EXECUTION_ID_LENGTH);
const ATTEMPTS = 3;

/**
 * Record a cancellation request without running the body (to the current run of a
 * continue-as-new chain when `executionId` continued): under a fresh fence (a live holder's
 * next append fails), `CANCEL_REQUESTED`, and `EXECUTION_RESUMED` unless the execution is
 * still `pending`. Resolves once the request is durable; the node that next runs the
 * execution replays it with cancellation pending and ends it `EXECUTION_CANCELLED`.
 * @example
 * await requestCancel(stores, 'order-42', 'customer asked');
 */
export async function requestCancel(
  stores: Pick<Stores, 'events' | 'snapshots'>,
  executionId: string,
  reason: string,
  options: LogRequestOptions = {},
): Promise<CancelResult> {
  const id = parseWith(executionIdSchema, executionId, 'executionId', 'executionId');
  const why = parseWith(z.string().min(1), reason, 'cancel reason', 'reason');
  const clock = options.clock ?? Date.now;
  const chain = { loadState: (executionId: string) => loadState(stores, executionId) };
  for (let attempt = 1; ; attempt++) {
    const named = await loadState(stores, id);
    if (named === null) throw new ExecutionNotFoundError(id);
    // Any id of a continue-as-new chain reaches its current run (adr/0063), read again after a race.
    const current = await currentRun(chain, named);
    const runId = current.executionId;
    if (isTerminalStatus(current.status)) return { cancelled: false, status: current.status };
    if (current.cancel !== undefined)
      return { cancelled: true, status: current.status, alreadyRequested: true };
    const fence = await stores.events.acquireFence(runId);
    const types: [EventType, unknown][] = [['CANCEL_REQUESTED', { reason: why, fence }]];
    // Pending work is claimed as it is; anything else becomes running with no holder, which
    // the recovery of an expired lease takes over (the fenced-out holder stops renewing).
    if (current.status !== 'pending')
      types.push(['EXECUTION_RESUMED', { reason: 'cancellation requested', fence }]);
    try {
      const written = await stores.events.append({
        executionId: runId,
        workflow: current.workflow,
        expectedSeq: current.sequence + 1,
        fence,
        events: types.map(([type, payload]) => ({
          envelopeId: newId(),
          type,
          payload: encode(payload),
          recordedAt: clock(),
        })),
      });
      return { cancelled: true, status: written.status };
    } catch (error) {
      if (!isRace(error) || attempt >= ATTEMPTS) throw error;
    }
  }
}

/**
 * Put a signal in an execution's inbox without the workflow's definition (so its payload is
 * not checked against the declared schema: the wait that consumes it does). Refuses before
 * anything is written: an unknown execution (`ExecutionNotFoundError`), an ended one
 * (`ExecutionFinishedError`), an oversized payload (`PayloadTooLargeError`). When the
 * execution is suspended waiting for `name`, it also records `EXECUTION_RESUMED` under the
 * newest fence (no new one, adr/0016), handing it to the nodes that run it; an execution of a
 * queue is queued again instead (`QueueStore.requeue`), and resumes where its queue admits it.
 * @example
 * await deliverSignal(stores, 'order-42', 'approve', true);
 */
export async function deliverSignal(
  stores: Pick<Stores, 'events' | 'snapshots' | 'signals' | 'queues'>,
  executionId: string,
  name: string,
  payload: unknown,
  options: DeliverSignalOptions = {},
): Promise<DeliveredSignal> {
  const id = parseWith(executionIdSchema, executionId, 'executionId', 'executionId');
  const signalName = parseWith(z.string().min(1), name, 'signal name', 'name');
  const signalId =
    options.signalId === undefined
      ? newId()
      : parseWith(signalIdSchema, options.signalId, 'signalId', 'signalId');
  const clock = options.clock ?? Date.now;
  const state = await loadState(stores, id);
  if (state === null) throw new ExecutionNotFoundError(id);
  if (isTerminalStatus(state.status)) throw new ExecutionFinishedError(id, state.status, `signal "${name}"`);
  const text = encode(payload);
  assertPayloadSize(
    id,
    `signal "${signalName}" of execution "${id}"`,
    text,
    options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES,
  );
  const waitingFor = state.status === 'suspended' ? (state.awaiting?.signals ?? []) : [];
  if (state.consumedSignals?.includes(signalId))
    return { signalId, accepted: false, handedOver: false, waitingFor };
  await stores.signals.send({ signalId, executionId: id, name: signalName, payload: text, sentAt: clock() });
  if (!waitingFor.includes(signalName)) return { signalId, accepted: true, handedOver: false, waitingFor };
  // An execution of a queue resumes only where its queue admits it (adr/0056): queue it again.
  if (await requeueSuspended(stores, state, clock()))
    return { signalId, accepted: true, handedOver: true, waitingFor };
  const handedOver = await handOverResumed(stores, state, `signal "${signalName}" arrived`, clock);
  return { signalId, accepted: true, handedOver, waitingFor };
}

/**
 * Record `EXECUTION_RESUMED` for a suspended execution under its newest fence (no new one,
 * adr/0016), handing it to the nodes that run it: running with no holder, it is taken over once
 * its lease lapses. False when a node resumed it first (it reads the inbox itself).
 */
export async function handOverResumed(
  stores: Pick<Stores, 'events'>,
  state: ExecutionState,
  reason: string,
  clock: () => number,
): Promise<boolean> {
  const fence = await resumeFence(stores.events, state);
  try {
    await stores.events.append({
      executionId: state.executionId,
      workflow: state.workflow,
      expectedSeq: state.sequence + 1,
      fence,
      events: [
        {
          envelopeId: newId(),
          type: 'EXECUTION_RESUMED',
          payload: encode({ reason, fence }),
          recordedAt: clock(),
        },
      ],
    });
    return true;
  } catch (error) {
    if (isRace(error)) return false;
    throw error;
  }
}

function isRace(error: unknown): boolean {
  const name = error instanceof Error ? error.name : '';
  return name === 'DuplicateSequenceError' || name === 'SequenceGapError' || name === 'StaleFenceError';
}
