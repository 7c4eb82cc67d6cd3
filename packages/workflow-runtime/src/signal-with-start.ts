/**
 * `signalWithStart` (adr/0064): a start that carries its signal in seq 0, so starting and
 * delivering are one append, atomic in every store. Of racing callers one wins seq 0 with its
 * signal; the others find the execution and send theirs to its inbox, as `runtime.signal`
 * does. The body's first wait for the name takes a carried signal before the inbox's.
 */
import { z } from 'zod';
import { assertPayloadSize, encode } from './codec.js';
import { UnknownSignalError } from './errors.js';
import type { CarriedSignal } from './events.js';
import { MAX_EXECUTION_ID_LENGTH, nameSchema, newId, wellFormed } from './ids.js';
import { refuseReserved } from './update-inbox.js';
import {
  type AnyWorkflow,
  declaredSignal,
  parseWith,
  type SignalInput,
  type SignalName,
  type WorkflowMessages,
} from './workflow.js';

/** The signal of `signalWithStart`. */
export interface StartSignal<
  M extends WorkflowMessages = WorkflowMessages,
  K extends SignalName<M> = SignalName<M>,
> {
  /** A signal the workflow declares. */
  name: K;
  /** Its payload, checked by the declared schema before anything is written. */
  payload: SignalInput<M, K>;
  /**
   * Id of the signal within the execution (default: a new ULID); a caller that retries after an
   * error passes the same id, and the signal is consumed at most once.
   */
  signalId?: string;
}

const signalSchema = z.object({
  name: nameSchema,
  signalId: wellFormed(z.string().min(1).max(MAX_EXECUTION_ID_LENGTH)).optional(),
});

/**
 * The signal checked against `definition` (declared name, payload by its schema, size), as seq 0
 * carries it; throws before anything is written.
 */
export function carriedSignalOf(
  definition: AnyWorkflow,
  executionId: string,
  signal: StartSignal,
  now: number,
  maxPayloadBytes: number,
): CarriedSignal {
  const where = 'signalWithStart signal';
  const { name, signalId } = parseWith(signalSchema, signal, where, 'signal');
  refuseReserved(name, where, 'signal.name');
  if (signalId !== undefined) refuseReserved(signalId, where, 'signal.signalId');
  const schema = declaredSignal(definition, name);
  if (schema === undefined)
    throw new UnknownSignalError(executionId, definition.name, name, Object.keys(definition.signals ?? {}));
  const at = `signal "${name}" of execution "${executionId}"`;
  parseWith(schema, signal.payload, at, 'payload');
  // As the inbox keeps it: what the sender passed, parsed by the wait (a transform runs once).
  const payload = encode(signal.payload);
  assertPayloadSize(executionId, at, payload, maxPayloadBytes);
  return { signalId: signalId ?? newId(), name, payload, sentAt: now };
}
