/** Reading executions back: state from the newest snapshot plus the events after it (L5). */
import { type Codec, defaultCodec, encodeHolding } from './codec.js';
import type { Envelope, StoredEvent } from './events.js';
import { type ExecutionState, type FoldableEvent, fold } from './fold.js';
import type { EventStore, SnapshotStore, Stores } from './spi.js';

/**
 * A snapshot's state holds recorded values a few levels down (`state.calls[i].output`, three):
 * room for those, so any state whose events could be recorded can be snapshotted.
 */
const SNAPSHOT_LEVELS = 8;

/**
 * Decode a stored event into an envelope.
 * @param codec revives recorded errors (default: Skein's and built-in classes only).
 */
export function toEnvelope(event: StoredEvent, codec: Codec = defaultCodec): Envelope {
  // The one place a payload's type is taken on trust: its writer recorded `EventPayloads[type]`.
  return {
    executionId: event.executionId,
    seq: event.seq,
    envelopeId: event.envelopeId,
    type: event.type,
    payload: codec.decode(event.payload),
    fence: event.fence,
    recordedAt: new Date(event.recordedAt),
  } as Envelope;
}

/** Every event of an execution, decoded with `codec` (default: {@link defaultCodec}), in seq order. */
export async function readHistory(
  events: EventStore,
  executionId: string,
  codec: Codec = defaultCodec,
): Promise<Envelope[]> {
  return (await events.read(executionId, 0)).map((event) => toEnvelope(event, codec));
}

/**
 * The folded state of an execution: the newest snapshot, then only the events after it.
 * Null when the execution does not exist. `snapshots: false` folds every event instead, without
 * reading a snapshot: always the same state (L5), one read fewer where no snapshot can exist.
 * @param codec revives recorded errors (default: Skein's and built-in classes only); a
 *   runtime passes its own, which also revives the classes its workflows register.
 */
export async function loadState(
  stores: Pick<Stores, 'events' | 'snapshots'>,
  executionId: string,
  codec: Codec = defaultCodec,
  { snapshots = true }: { snapshots?: boolean } = {},
): Promise<ExecutionState | null> {
  const snapshot = snapshots ? await stores.snapshots.latest(executionId) : null;
  const base = snapshot === null ? null : withHoles(codec.decode<ExecutionState>(snapshot.state));
  const events = await stores.events.read(executionId, snapshot === null ? 0 : snapshot.seq + 1);
  return foldLog(events, codec, base);
}

/** The state `events` fold to after `base` (default: none, `events` start at seq 0); null for none. */
export function foldLog(
  events: readonly StoredEvent[],
  codec: Codec = defaultCodec,
  base: ExecutionState | null = null,
): ExecutionState | null {
  return fold(
    events.map((event) => ({ ...event, payload: codec.decode(event.payload) }) as FoldableEvent),
    base,
  );
}

/**
 * A position no call has recorded (a signal wait still blocked while later calls recorded) is
 * a hole in `calls`; the codec writes it as `undefined`. Make it a hole again, so the state is
 * the fold's exactly (L5).
 */
function withHoles(state: ExecutionState): ExecutionState {
  const calls = state.calls;
  for (let i = 0; i < calls.length; i++) if (calls[i] === undefined) delete calls[i];
  return state;
}

/**
 * Save a snapshot of `state` when its batch (which started at `fromSeq`) crossed a multiple
 * of `every`. A snapshot is a cache: a failure to save one is reported, never fatal.
 */
export function saveSnapshot(
  snapshots: SnapshotStore,
  state: ExecutionState,
  fromSeq: number,
  every: number,
  onError: (error: unknown, context: string) => void,
): Promise<void> | undefined {
  // Only when the batch crossed a multiple of `every` (seq every, 2 * every, ...); otherwise
  // nothing to wait for (no promise: a step's path awaits only what it must).
  if (Math.floor(state.sequence / every) <= Math.floor(Math.max(0, fromSeq - 1) / every)) return undefined;
  return putSnapshot(snapshots, state, onError);
}

async function putSnapshot(
  snapshots: SnapshotStore,
  state: ExecutionState,
  onError: (error: unknown, context: string) => void,
): Promise<void> {
  try {
    await snapshots.put({
      executionId: state.executionId,
      seq: state.sequence,
      state: encodeHolding(state, SNAPSHOT_LEVELS),
    });
  } catch (error) {
    onError(error, `snapshot of execution "${state.executionId}" at seq ${state.sequence}`);
  }
}
