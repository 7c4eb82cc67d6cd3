/** Builders of append requests for the event-store suites. */
import type { EventStore, EventType } from '@skein/workflow-runtime';
import type { AppendRequest, EventDraft } from '@skein/workflow-runtime/spi';

const run = Math.random().toString(36).slice(2, 10);
let counter = 0;

/** A fresh envelope id, unique within this process. */
export function envelopeId(): string {
  counter += 1;
  return `env-${run}-${counter}`;
}

/** One event draft with a fresh envelope id. */
export function draft(type: EventType, payload = '{}', recordedAt = 1_700_000_000_000 + counter): EventDraft {
  return { envelopeId: envelopeId(), type, payload, recordedAt };
}

/** What {@link appendOf} needs beyond the events. */
export interface At {
  seq: number;
  fence?: number;
  workflow?: string;
}

/** A request for `executionId` at `at.seq` under `at.fence` (default: 0), workflow `wf` by default. */
export function appendOf(executionId: string, at: At, events: readonly EventDraft[]): AppendRequest {
  return { executionId, workflow: at.workflow ?? 'wf', expectedSeq: at.seq, fence: at.fence ?? 0, events };
}

/** Shorthand: one event of each type, in order. */
export function drafts(...types: EventType[]): EventDraft[] {
  return types.map((type) => draft(type));
}

/** Write seq 0 (`EXECUTION_STARTED`) and return the fence used. */
export async function start(
  store: EventStore,
  executionId: string,
  at: Omit<At, 'seq'> = {},
): Promise<number> {
  const fence = at.fence ?? 0;
  await store.append(appendOf(executionId, { ...at, seq: 0, fence }, drafts('EXECUTION_STARTED')));
  return fence;
}

/** The event types of an execution's log, in seq order. */
export async function typesOf(store: EventStore, executionId: string): Promise<string[]> {
  return (await store.read(executionId)).map((event) => event.type);
}
