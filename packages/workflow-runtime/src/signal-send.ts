/**
 * `runtime.signal`: validate against the workflow's declared signals, keep the signal in the
 * durable inbox (never the log: an append would need a fence and fence out the holder), then
 * wake the execution when it is suspended waiting for that name (adr/0012).
 */
import { z } from 'zod';
import { assertPayloadSize, encode } from './codec.js';
import {
  ExecutionFinishedError,
  ExecutionNotFoundError,
  UnknownSignalError,
  UnknownWorkflowError,
} from './errors.js';
import { isTerminalStatus } from './events.js';
import { executionIdSchema, MAX_EXECUTION_ID_LENGTH, nameSchema, newId, wellFormed } from './ids.js';
import { type FeatureDeps, resumeIfWaiting } from './runtime-features.js';
import { parseWith } from './workflow.js';

/** Options of `runtime.signal`. */
export interface SignalOptions {
  /**
   * Id of the signal (default: a new ULID). Sending an id again is a no-op, so a sender that
   * retries after an error passes the same id and the signal is consumed at most once.
   */
  signalId?: string;
}

/** What `runtime.signal` did. */
export interface SignalResult {
  signalId: string;
  /** False when the log had already consumed this `signalId`; nothing was written. */
  accepted: boolean;
  /** True when this call woke the suspended execution. */
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
  executionId: string,
  name: string,
  payload: unknown,
  options: SignalOptions = {},
): Promise<SignalResult> {
  const request = parseWith(requestSchema, { executionId, name, ...options }, 'signal request', 'signal');
  const state = await deps.loadState(request.executionId);
  if (state === null) throw new ExecutionNotFoundError(request.executionId);
  if (isTerminalStatus(state.status))
    throw new ExecutionFinishedError(request.executionId, state.status, `signal "${name}"`);
  if (!deps.registry.has(state.workflow, state.version))
    throw new UnknownWorkflowError(state.workflow, state.version, deps.registry.names(), state.executionId);
  const workflow = deps.registry.get(state.workflow, state.version);
  const schema = workflow.signals[request.name];
  if (schema === undefined)
    throw new UnknownSignalError(executionId, workflow.name, request.name, Object.keys(workflow.signals));
  const where = `signal "${request.name}" of execution "${executionId}"`;
  parseWith(schema, payload, where, 'payload');
  // The inbox keeps what the sender passed; the wait parses it (so a transform runs once).
  const text = encode(payload);
  assertPayloadSize(executionId, where, text, deps.maxPayloadBytes);
  const signalId = request.signalId ?? newId();
  if (state.consumedSignals?.includes(signalId)) return { signalId, accepted: false, woke: false };
  await deps.stores.signals.send({
    signalId,
    executionId,
    name: request.name,
    payload: text,
    sentAt: deps.clock(),
  });
  const woke = await resumeIfWaiting(
    deps,
    executionId,
    (current) => current.awaiting?.signals.includes(request.name) === true,
    `signal "${request.name}" arrived`,
  );
  return { signalId, accepted: true, woke };
}
