/**
 * What the log allows a step's effect to have run: once, plus once more for every takeover
 * (`EXECUTION_RECOVERED`, or a resume) recorded between the step's first `STEP_STARTED` and
 * its `STEP_COMPLETED` — each such takeover interrupted the step. (A step's function only runs
 * after its `STEP_STARTED` is durable, so every run of it is also one `STEP_STARTED`.)
 */
import type { Envelope, StepCompletedPayload, StepStartedPayload } from '@skein/workflow-runtime';

/** One step of one execution, as the log tells it. */
export interface StepHistory {
  step: string;
  /** `STEP_STARTED` events of the step. */
  starts: number;
  /** `STEP_COMPLETED` events of the step. */
  completions: number;
  /** Takeovers between the step's first start and its completion. */
  interruptions: number;
}

const TAKEOVERS = new Set(['EXECUTION_RECOVERED', 'EXECUTION_RESUMED']);

/** The history of `step` in `log`. */
export function stepHistory(log: readonly Envelope[], step: string): StepHistory {
  const history: StepHistory = { step, starts: 0, completions: 0, interruptions: 0 };
  let open = false;
  for (const event of log) {
    if (event.type === 'STEP_STARTED' && (event.payload as StepStartedPayload).name === step) {
      history.starts += 1;
      open = true;
    } else if (event.type === 'STEP_COMPLETED' && (event.payload as StepCompletedPayload).name === step) {
      history.completions += 1;
      open = false;
    } else if (open && TAKEOVERS.has(event.type)) {
      history.interruptions += 1;
    }
  }
  return history;
}

/** A problem with one step's effects, in words; undefined when the count is within what the log allows. */
export function effectViolation(executionId: string, history: StepHistory, ran: number): string | undefined {
  const allowed = 1 + history.interruptions;
  if (history.completions !== 1)
    return `${executionId} ${history.step}: completed ${history.completions} times in the log`;
  if (ran < 1 || ran > allowed)
    return `${executionId} ${history.step}: effect ran ${ran} times; the log allows 1 to ${allowed} (${history.interruptions} interruption(s), ${history.starts} start(s))`;
  return undefined;
}
