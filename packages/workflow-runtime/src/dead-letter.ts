/**
 * Dead-lettering: end an execution with `EXECUTION_DEAD_LETTERED` under a freshly acquired
 * fence. It reads only the execution index (never the log or a snapshot), so it lands even
 * for an execution whose log cannot be read or replayed; its cleanup (the lease, the timers)
 * is best-effort and reported, never a reason for the dead-letter itself to fail.
 */
import { encode } from './codec.js';
import { ExecutionNotFoundError } from './errors.js';
import { isTerminalStatus } from './events.js';
import { newId } from './ids.js';
import { executionLeaseKey } from './leases.js';
import type { Stores } from './spi.js';

/** What {@link deadLetterExecution} needs. */
export interface DeadLetterDeps {
  stores: Pick<Stores, 'events' | 'timers' | 'leases' | 'blockages'>;
  clock: () => number;
  /** Owner of the execution lease to release, when this node holds it. */
  leaseOwner: string;
  onError: (error: unknown, context: string) => void;
}

/** Attempts before a dead-letter that keeps losing the race for the next seq gives up. */
const ATTEMPTS = 5;

/**
 * Append `EXECUTION_DEAD_LETTERED` with `reason`. Resolves true when this call ended the
 * execution, false when it was already terminal.
 */
export async function deadLetterExecution(
  deps: DeadLetterDeps,
  executionId: string,
  reason: string,
): Promise<boolean> {
  const { events } = deps.stores;
  for (let attempt = 1; ; attempt++) {
    const summary = await events.getExecution(executionId);
    if (summary === null) throw new ExecutionNotFoundError(executionId);
    if (isTerminalStatus(summary.status)) return false;
    const fence = await events.acquireFence(executionId);
    const error = new Error(reason);
    error.name = 'ExecutionDeadLettered';
    try {
      await events.append({
        executionId,
        workflow: summary.workflow,
        expectedSeq: summary.sequence + 1,
        fence,
        events: [
          {
            envelopeId: newId(),
            type: 'EXECUTION_DEAD_LETTERED',
            payload: encode({ error, reason }),
            recordedAt: deps.clock(),
          },
        ],
      });
      break;
    } catch (err) {
      // Another writer appended or fenced in between: read the index again and retry.
      const raced = isRace(err);
      if (!raced || attempt >= ATTEMPTS) throw err;
    }
  }
  await cleanUp(deps, executionId);
  return true;
}

function isRace(error: unknown): boolean {
  const name = error instanceof Error ? error.name : '';
  return (
    name === 'DuplicateSequenceError' ||
    name === 'StaleFenceError' ||
    name === 'ExecutionTerminatedError' ||
    name === 'SequenceGapError'
  );
}

/** Best-effort: complete the execution's timers, forget its blockage, release our lease; failures are reported. */
async function cleanUp(deps: DeadLetterDeps, executionId: string): Promise<void> {
  const { timers, leases, blockages } = deps.stores;
  try {
    const pending = await timers.forExecution(executionId);
    await Promise.all(pending.map((timer) => timers.complete(timer.timerId)));
  } catch (error) {
    deps.onError(error, `timer cleanup after dead-lettering execution "${executionId}"`);
  }
  try {
    await blockages?.clear(executionId);
  } catch (error) {
    deps.onError(error, `blockage cleanup after dead-lettering execution "${executionId}"`);
  }
  try {
    await leases.release(executionLeaseKey(executionId), deps.leaseOwner);
  } catch (error) {
    deps.onError(error, `lease release after dead-lettering execution "${executionId}"`);
  }
}
