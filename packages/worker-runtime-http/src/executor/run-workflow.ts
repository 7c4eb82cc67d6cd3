/**
 * Running one accepted run on the executor: a runtime of its own over in-memory stores, so
 * the work needs no central store; the terminal state becomes the result to retain. Every
 * failure (an unknown workflow, a refused input, a body that throws) is a failed result.
 */
import {
  type AnyWorkflow,
  createRuntime,
  type ExecutionState,
  isTerminalStatus,
  openMemoryStores,
} from '@skein/workflow-runtime';
import { encode, recordableError } from '@skein/workflow-runtime/internal';
import type { RunOffer } from './executor-wire.js';
import type { ChosenResult } from './retained-store.js';

/** Exit code of a completed run. */
export const EXIT_COMPLETED = 0;
/** Exit code of a run whose workflow failed, was cancelled, or could not run. */
export const EXIT_FAILED = 1;

/** Run `offer` to a terminal state and choose its result. */
export async function runWorkflow(
  workflows: readonly AnyWorkflow[],
  offer: RunOffer,
  clock: () => number,
): Promise<ChosenResult> {
  const stores = openMemoryStores();
  const runtime = createRuntime({ stores, workflows: [...workflows], onError: () => undefined });
  try {
    let state: ExecutionState | null = await runtime.execute({
      executionId: offer.executionId,
      workflow: offer.workflow,
      input: offer.input,
      ...(offer.version === undefined ? {} : { version: offer.version }),
    });
    if (!isTerminalStatus(state.status)) {
      // Suspended (a sleep, a retry): the runtime wakes itself; wait for the end.
      await runtime
        .handle(offer.executionId)
        .result()
        .catch(() => undefined);
      state = await runtime.loadState(offer.executionId);
    }
    return chosen(state, clock());
  } catch (error) {
    return failed(recordableError(error), clock());
  } finally {
    await runtime.close();
    await stores.close();
  }
}

function chosen(state: ExecutionState | null, at: number): ChosenResult {
  if (state?.status === 'completed') {
    return {
      outcome: 'completed',
      result: encode(state.output),
      exitCode: EXIT_COMPLETED,
      exitMessage: 'completed',
      chosenAt: at,
    };
  }
  return failed(state?.error ?? new Error(`the run ended ${state?.status ?? 'without a state'}`), at);
}

function failed(error: unknown, at: number): ChosenResult {
  const message =
    error instanceof Error ? error.message : String((error as { message?: unknown })?.message ?? error);
  return {
    outcome: 'failed',
    result: encode(error),
    exitCode: EXIT_FAILED,
    exitMessage: message.slice(0, 1024),
    chosenAt: at,
  };
}
