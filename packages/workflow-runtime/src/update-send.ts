/**
 * `runtime.update` (adr/0049): validate against the workflow's declared updates before
 * anything is written, keep the update in the signal inbox (no append, so no fence: the
 * execution's holder is never fenced out), wake the execution when it is suspended, and wait
 * until its log holds `UPDATE_APPLIED` for the update's id; then return what the handler
 * returned, or throw `UpdateFailedError` with what it threw. The log is the reply: a caller
 * that gave up, crashed or timed out asks again with the same `updateId` and gets the result
 * the log recorded, and the update is never applied twice.
 */
import { z } from 'zod';
import { assertPayloadSize, encode } from './codec.js';
import { forwardIfContinued } from './continuation-chain.js';
import { optionalPositiveMs } from './durations.js';
import {
  ExecutionFinishedError,
  ExecutionNotFoundError,
  SignalInboxFullError,
  UnknownUpdateError,
  UnknownWorkflowError,
  UpdateFailedError,
  UpdateTimeoutError,
} from './errors.js';
import { isTerminalStatus } from './events.js';
import type { ExecutionState } from './fold.js';
import { executionIdSchema, MAX_EXECUTION_ID_LENGTH, nameSchema, newId, wellFormed } from './ids.js';
import { resumeIfArrived, resumeIfWaiting } from './resume-on-arrival.js';
import type { FeatureDeps } from './signal-child-deps.js';
import { UPDATE_PREFIX, updateInboxId, updateInboxName } from './update-inbox.js';
import { declaredUpdate, parseWith } from './workflow.js';

/** Options of `runtime.update`. */
export interface UpdateOptions {
  /**
   * Id of the update within the execution (default: a new ULID). Sending an id the execution
   * already had returns the first update's result (or throws its failure) and writes nothing,
   * so a caller that retries after an error or a timeout passes the same id.
   */
  updateId?: string;
  /**
   * Give up waiting after this many milliseconds with `UpdateTimeoutError`; the update stays
   * in the inbox and is applied when the body next waits (default: wait until it is applied
   * or the execution ends).
   */
  timeoutMs?: number;
}

const requestSchema = z.object({
  executionId: executionIdSchema,
  name: nameSchema,
  updateId: wellFormed(
    z
      .string()
      .min(1)
      .max(MAX_EXECUTION_ID_LENGTH - UPDATE_PREFIX.length),
  ).optional(),
  timeoutMs: z.unknown().optional(),
});

/** First and longest pause between two reads of the log while waiting for the result. */
const FIRST_POLL_MS = 5;
const MAX_POLL_MS = 200;

/** See the module comment; refuses with a clear error before anything is written. */
export async function sendUpdate(
  deps: FeatureDeps,
  namedId: string,
  name: string,
  payload: unknown,
  options: UpdateOptions = {},
): Promise<unknown> {
  const request = parseWith(
    requestSchema,
    { executionId: namedId, name, ...options },
    'update request',
    'update',
  );
  const timeoutMs = optionalPositiveMs(request.timeoutMs, 'update request', 'update.timeoutMs');
  const updateId = request.updateId ?? newId();
  // Any id of a continue-as-new chain reaches its current run (adr/0063); a repeated id
  // returns the result recorded by whichever run of the chain applied it, also once it ended.
  const state = await chainRunOf(deps, request.executionId, request.updateId);
  if (!('status' in state)) return resultOf(state.applied, request.name, updateId);
  const executionId = state.executionId;
  if (isTerminalStatus(state.status))
    throw new ExecutionFinishedError(executionId, state.status, `update "${name}"`);
  if (!deps.registry.has(state.workflow, state.version))
    throw new UnknownWorkflowError(state.workflow, state.version, deps.registry.names(), state.executionId);
  const workflow = deps.registry.get(state.workflow, state.version);
  const schema = declaredUpdate(workflow, request.name);
  if (schema === undefined)
    throw new UnknownUpdateError(
      executionId,
      workflow.name,
      request.name,
      Object.keys(workflow.updates ?? {}),
    );
  const where = `update "${request.name}" of execution "${executionId}"`;
  parseWith(schema, payload, where, 'payload');
  // The inbox keeps what the sender passed; the handler gets it parsed (a transform runs on apply).
  const text = encode(payload);
  assertPayloadSize(executionId, where, text, deps.maxPayloadBytes);
  const inboxName = updateInboxName(request.name);
  const outcome = await deps.stores.signals.send(
    { signalId: updateInboxId(updateId), executionId, name: inboxName, payload: text, sentAt: deps.clock() },
    { maxPending: deps.maxPendingSignals },
  );
  if (outcome === 'inbox-full')
    throw new SignalInboxFullError(executionId, inboxName, deps.maxPendingSignals);
  // It continued while this was written: the update goes on with the inbox (the wait follows).
  if ((await forwardIfContinued(deps, executionId)) === undefined)
    await wake(deps, state, inboxName, outcome === 'duplicate');
  return awaitApplied(deps, executionId, request.name, updateId, timeoutMs);
}

/** Wake the execution when it is suspended and waits for updates of this name. */
async function wake(
  deps: FeatureDeps,
  state: ExecutionState,
  inboxName: string,
  again: boolean,
): Promise<void> {
  const executionId = state.executionId;
  if (deps.handOffSignal !== undefined) {
    if (!again && state.awaiting?.signals.includes(inboxName) === true)
      await deps.handOffSignal(state, inboxName);
    return;
  }
  if (again) {
    await resumeIfArrived(deps, executionId, 'an update was sent again');
    return;
  }
  await resumeIfWaiting(
    deps,
    executionId,
    (current) => current.awaiting?.signals.includes(inboxName) === true,
    `update "${inboxName.slice(UPDATE_PREFIX.length)}" arrived`,
    { orEarlier: true },
  );
}

/** Read the log until it applied `updateId`, the execution ended, or `timeoutMs` passed. */
async function awaitApplied(
  deps: FeatureDeps,
  executionId: string,
  name: string,
  updateId: string,
  timeoutMs: number | undefined,
): Promise<unknown> {
  const started = Date.now();
  let delay = FIRST_POLL_MS;
  let current = executionId;
  for (;;) {
    const state = await deps.loadState(current);
    if (state === null) throw new ExecutionNotFoundError(current);
    if (appliedAt(state, updateId) !== undefined) return resultOf(state, name, updateId);
    // Not applied before the continue: it went on with the inbox to the successor.
    if (state.continuedAs !== undefined) {
      current = state.continuedAs;
      continue;
    }
    if (isTerminalStatus(state.status))
      throw new ExecutionFinishedError(executionId, state.status, `update "${name}" (it was not applied)`);
    const left = timeoutMs === undefined ? delay : timeoutMs - (Date.now() - started);
    if (left <= 0) throw new UpdateTimeoutError(executionId, name, updateId, timeoutMs ?? 0);
    await new Promise((resolve) => setTimeout(resolve, Math.min(delay, left)));
    delay = Math.min(delay * 2, MAX_POLL_MS);
  }
}

/**
 * The chain's current run from `executionId` on, or `{ applied }`, the run of the chain that
 * applied `updateId` when one did.
 */
async function chainRunOf(
  deps: FeatureDeps,
  executionId: string,
  updateId: string | undefined,
): Promise<ExecutionState | { applied: ExecutionState }> {
  let state = await deps.loadState(executionId);
  if (state === null) throw new ExecutionNotFoundError(executionId);
  for (;;) {
    if (updateId !== undefined && appliedAt(state, updateId) !== undefined) return { applied: state };
    if (state.continuedAs === undefined) return state;
    const next: ExecutionState | null = await deps.loadState(state.continuedAs);
    if (next === null) return state;
    state = next;
  }
}

function appliedAt(state: ExecutionState, updateId: string): number | undefined {
  return state.updates?.find((update) => update.updateId === updateId)?.position;
}

/** The recorded outcome of an applied update: its result, or `UpdateFailedError`. */
function resultOf(state: ExecutionState, name: string, updateId: string): unknown {
  const call = state.calls[appliedAt(state, updateId)!];
  if (call?.status === 'failed')
    throw new UpdateFailedError(state.executionId, call.name ?? name, updateId, { cause: call.error });
  return call?.output;
}
