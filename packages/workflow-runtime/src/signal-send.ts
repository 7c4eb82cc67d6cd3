/**
 * `runtime.signal`: validate against the workflow's declared signals, keep the signal in the
 * durable inbox (never the log: an append would need a fence and fence out the holder), then
 * wake the execution when it is suspended waiting for that name (adr/0012). Signal ids are
 * scoped to the execution and the inbox is bounded (adr/0025).
 */
import { z } from 'zod';
import { assertPayloadSize, encode } from './codec.js';
import { currentRun, forwardIfContinued } from './continuation-chain.js';
import {
  ExecutionFinishedError,
  ExecutionNotFoundError,
  InvalidInputError,
  SignalInboxFullError,
  UnknownSignalError,
  UnknownWorkflowError,
} from './errors.js';
import { isTerminalStatus } from './events.js';
import { executionIdSchema, MAX_EXECUTION_ID_LENGTH, nameSchema, newId, wellFormed } from './ids.js';
import { resumeIfArrived, resumeIfWaiting } from './resume-on-arrival.js';
import type { RuntimeOptions } from './runtime-options.js';
import type { FeatureDeps } from './signal-child-deps.js';
import { DEFAULT_MAX_PENDING_SIGNALS } from './signal-inbox.js';
import { refuseReserved } from './update-inbox.js';
import { declaredSignal, parseWith } from './workflow.js';

/** Options of `runtime.signal`. */
export interface SignalOptions {
  /**
   * Id of the signal within the execution (default: a new ULID). Sending an id the execution
   * already had again is a no-op that says so (`duplicate: true`), so a sender that retries
   * after an error passes the same id and the signal is consumed at most once. Ids are scoped
   * to the execution: the same id sent to another execution is another signal.
   */
  signalId?: string;
}

/** What `runtime.signal` did. */
export interface SignalResult {
  signalId: string;
  /** True when this call stored the signal in the inbox. */
  accepted: boolean;
  /**
   * True when the execution already had a signal with this `signalId` (waiting in its inbox or
   * already consumed): nothing was written and the first send stands (`accepted` is false).
   */
  duplicate: boolean;
  /**
   * True when the suspended execution was woken to receive it: by this call, or by a wake-up
   * already under way when it arrived (the re-check a run makes right after suspending), whose
   * run reads the inbox at its wait and so receives this signal.
   */
  woke: boolean;
}

const requestSchema = z.object({
  executionId: executionIdSchema,
  name: nameSchema,
  signalId: wellFormed(z.string().min(1).max(MAX_EXECUTION_ID_LENGTH)).optional(),
});

/** See the module comment; refuses with a clear error before anything is written. */
export async function sendSignal(
  deps: FeatureDeps,
  namedId: string,
  name: string,
  payload: unknown,
  options: SignalOptions = {},
): Promise<SignalResult> {
  const request = parseWith(
    requestSchema,
    { executionId: namedId, name, ...options },
    'signal request',
    'signal',
  );
  if (request.signalId !== undefined) refuseReserved(request.signalId, 'signal request', 'signal.signalId');
  // A body resident here whose log did not move has the state without a fold (adr/0068).
  const named =
    (await deps.residentState?.(request.executionId)) ?? (await deps.loadState(request.executionId));
  if (named === null) throw new ExecutionNotFoundError(request.executionId);
  // Any id of a continue-as-new chain reaches its current run (adr/0063).
  const state = await currentRun(deps, named);
  const executionId = state.executionId;
  if (isTerminalStatus(state.status))
    throw new ExecutionFinishedError(executionId, state.status, `signal "${name}"`);
  if (!deps.registry.has(state.workflow, state.version))
    throw new UnknownWorkflowError(state.workflow, state.version, deps.registry.names(), state.executionId);
  const workflow = deps.registry.get(state.workflow, state.version);
  const schema = declaredSignal(workflow, request.name);
  if (schema === undefined)
    throw new UnknownSignalError(executionId, workflow.name, request.name, Object.keys(workflow.signals));
  const where = `signal "${request.name}" of execution "${executionId}"`;
  parseWith(schema, payload, where, 'payload');
  // The inbox keeps what the sender passed; the wait parses it (so a transform runs once).
  const text = encode(payload);
  assertPayloadSize(executionId, where, text, deps.maxPayloadBytes);
  const signalId = request.signalId ?? newId();
  // Only a caller's own id can be one the log consumed (a new ULID is in no log): the scan is skipped.
  if (request.signalId !== undefined && state.consumedSignals?.includes(signalId))
    return duplicateOf(signalId);
  // A wake-up already under way (the re-check right after a suspension) may find this signal
  // and resume the execution before this call asks: that wake-up counts as this call's.
  const underWay = deps.resumes.get(executionId);
  const outcome = await deps.stores.signals.send(
    { signalId, executionId, name: request.name, payload: text, sentAt: deps.clock() },
    { maxPending: deps.maxPendingSignals },
  );
  if (outcome === 'inbox-full')
    throw new SignalInboxFullError(executionId, request.name, deps.maxPendingSignals);
  // It continued while this was written: the signal goes on with the inbox, never lost.
  if ((await forwardIfContinued(deps, executionId)) !== undefined)
    return outcome === 'duplicate'
      ? duplicateOf(signalId)
      : { signalId, accepted: true, duplicate: false, woke: false };
  if (deps.handOffSignal !== undefined) {
    const handedOff = outcome === 'sent' && state.awaiting?.signals.includes(request.name) === true;
    if (handedOff) await deps.handOffSignal(state, request.name);
    return outcome === 'duplicate'
      ? duplicateOf(signalId)
      : { signalId, accepted: true, duplicate: false, woke: false };
  }
  if (outcome === 'duplicate') {
    // A retry whose first send landed but did not wake the execution (it failed after the
    // write) wakes it now; resumeIfArrived writes nothing unless a waited-for signal is there.
    await resumeIfArrived(deps, executionId, `signal "${request.name}" was sent again`);
    return duplicateOf(signalId);
  }
  const woke = await resumeIfWaiting(
    deps,
    executionId,
    (current) => current.awaiting?.signals.includes(request.name) === true,
    `signal "${request.name}" arrived`,
    { orEarlier: true },
  );
  const earlier = underWay === undefined ? false : await underWay.catch(() => false);
  return { signalId, accepted: true, duplicate: false, woke: woke || earlier };
}

function duplicateOf(signalId: string): SignalResult {
  return { signalId, accepted: false, duplicate: true, woke: false };
}

/**
 * `createRuntime({ maxPendingSignals })` checked: an integer >= 1, or the default when absent.
 * Throws `InvalidInputError` naming the option.
 */
export function maxPendingSignalsOf(options: Pick<RuntimeOptions, 'maxPendingSignals'>): number {
  const value = options.maxPendingSignals;
  if (value === undefined) return DEFAULT_MAX_PENDING_SIGNALS;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new InvalidInputError('createRuntime options', [
      { path: 'maxPendingSignals', message: `must be an integer >= 1, got ${value}` },
    ]);
  }
  return value;
}
