/**
 * `ctx.signal(otherId, name, payload)` and a child handle's `signal` / `cancel` (adr/0064): calls
 * recorded like a step, at the position they take when they are made. A signal goes to the
 * receiver's inbox under an id derived from the sender and the position (`sentSignalId`), so a
 * run that delivers it again after a crash between the delivery and the record meets the
 * receiver's dedupe: it is delivered once per recorded call. The outcome is recorded as
 * `STEP_COMPLETED` (`kind: 'send'` or `'cancel'`): what was sent, or the refusal, which a replay
 * throws again.
 */
import { z } from 'zod';
import {
  ExecutionFinishedError,
  ExecutionNotFoundError,
  InvalidInputError,
  PayloadTooLargeError,
  SerializationError,
  SignalInboxFullError,
  UnknownSignalError,
} from './errors.js';
import { assertName, executionIdSchema, MAX_EXECUTION_ID_LENGTH } from './ids.js';
import { featuresOf, type RunInternals } from './run-internals.js';
import { parseWith } from './workflow.js';

/** What `ctx.signal` (and a child handle's `signal`) resolves with once the signal is in the inbox. */
export interface SentSignal {
  /** The receiver. */
  executionId: string;
  /** The id the signal has in the receiver's inbox, derived from the sender and the call's position. */
  signalId: string;
}

/** What a send or a child's cancellation records as its outcome. */
type Outcome<T> = { ok: T } | { refused: unknown };

/** Refusals the receiver's side gives for good: recorded, and thrown again by a replay. */
const REFUSALS = [
  ExecutionNotFoundError,
  ExecutionFinishedError,
  UnknownSignalError,
  InvalidInputError,
  PayloadTooLargeError,
  SerializationError,
  SignalInboxFullError,
];

/**
 * The inbox id of the signal sent by the call at `position` of `senderId`: the same on every
 * replay. Ids past the inbox's limit use a digest of the sender's id instead of the id itself.
 */
export function sentSignalId(senderId: string, position: number): string {
  const plain = `sent:${position}:${senderId}`;
  return plain.length <= MAX_EXECUTION_ID_LENGTH ? plain : `sent:${position}:#${digest(senderId)}`;
}

/** `ctx.signal`; `after` delays the delivery (a child handle waits for its child to exist). */
export function signalCall(
  run: RunInternals,
  targetId: string,
  name: string,
  payload: unknown,
  after?: Promise<unknown>,
): Promise<SentSignal> {
  try {
    return takeSignalCall(run, targetId, name, payload, after);
  } catch (error) {
    return Promise.reject(error);
  }
}

function takeSignalCall(
  run: RunInternals,
  targetId: string,
  name: string,
  payload: unknown,
  after?: Promise<unknown>,
): Promise<SentSignal> {
  // Bad arguments fail the call before it takes a position, as a bad name fails any other call.
  const target = parseWith(executionIdSchema, targetId, 'ctx.signal call', 'executionId');
  assertName(name, 'ctx.signal call', 'name');
  const features = featuresOf(run, 'ctx.signal');
  const { position, record } = run.next('send', name);
  return settle<SentSignal>(
    run,
    position,
    name,
    record?.status === 'completed' ? record.output : undefined,
    async () => {
      await after?.catch(() => undefined);
      const signalId = sentSignalId(run.executionId, position);
      await features.sendSignal(target, name, payload, signalId);
      return { executionId: target, signalId };
    },
    'send',
  );
}

/** A child handle's `cancel`: cancels the child (a no-op once it ended) and records that it did. */
export function cancelChildCall(
  run: RunInternals,
  childId: string,
  reason: string,
  after: Promise<unknown>,
): Promise<void> {
  try {
    return takeCancelCall(run, childId, reason, after);
  } catch (error) {
    return Promise.reject(error);
  }
}

function takeCancelCall(
  run: RunInternals,
  childId: string,
  reason: string,
  after: Promise<unknown>,
): Promise<void> {
  const why = parseWith(z.string().min(1), reason, 'child handle cancel', 'reason');
  const features = featuresOf(run, 'child handle cancel');
  const { position, record } = run.next('cancel', childId);
  const recorded = record?.status === 'completed' ? record.output : undefined;
  return settle<null>(
    run,
    position,
    childId,
    recorded,
    async () => {
      await after.catch(() => undefined);
      await features.cancelChild(childId, `cancelled by its parent "${run.executionId}": ${why}`);
      return null;
    },
    'cancel',
  ).then(() => undefined);
}

/** Replay a recorded outcome, or do `work` and record what it gave (or the refusal it met). */
async function settle<T>(
  run: RunInternals,
  position: number,
  name: string,
  recorded: unknown,
  work: () => Promise<T>,
  kind: 'send' | 'cancel',
): Promise<T> {
  if (recorded !== undefined) return unwrap(recorded as Outcome<T>);
  let outcome: Outcome<T>;
  try {
    // What the body recorded before this call (seq 0 at least) is durable before the receiver hears of it.
    outcome = {
      ok: await run.track(async () => {
        await run.writer.flush();
        return work();
      }),
    };
  } catch (error) {
    if (!REFUSALS.some((refusal) => error instanceof refusal)) throw error;
    outcome = { refused: error };
  }
  run.writer.record('STEP_COMPLETED', { position, name, kind, output: outcome }, `ctx.signal "${name}"`);
  return unwrap(run.state().calls[position]?.output as Outcome<T>);
}

function unwrap<T>(outcome: Outcome<T>): T {
  if ('refused' in outcome) throw outcome.refused;
  return outcome.ok;
}

/** 64 bits of FNV-1a over the text, as hex: a stable stand-in for an id too long to embed. */
function digest(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    a = Math.imul(a ^ code, 0x01000193) >>> 0;
    b = Math.imul(b ^ code, 0x01000193 ^ 0x5bd1e995) >>> 0;
  }
  return a.toString(16).padStart(8, '0') + b.toString(16).padStart(8, '0') + text.length.toString(16);
}
