/**
 * Resuming a suspended execution takes no new fence (adr/0016). A suspended execution has no
 * holder: the run that suspended it is over. Acquiring a fence there would let two nodes
 * resuming at once fence each other out, the loser having already fenced out the winner.
 * Instead every resumer appends `EXECUTION_RESUMED` at the next seq under the newest fence;
 * the sequence decides (L1): exactly one wins, and the others' append fails with
 * `DuplicateSequenceError` and writes nothing. Any older writer is still fenced out (L3).
 */
import { DuplicateSequenceError } from './errors.js';
import type { ExecutionState } from './fold.js';
import type { EventStore } from './spi.js';

/** The fence a resume of `state` appends with: the newest one, read, never acquired. */
export async function resumeFence(events: EventStore, state: ExecutionState): Promise<number> {
  return Math.max(state.fence, await events.currentFence(state.executionId));
}

/** True when `error` says another resumer appended first at `resumeSeq` (this resume lost the race). */
export function lostResumeRace(error: unknown, resumeSeq: number): boolean {
  return error instanceof DuplicateSequenceError && error.seq === resumeSeq;
}
