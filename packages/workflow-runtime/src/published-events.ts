/**
 * `runtime.getEvent` (adr/0050): the latest value an execution published under a key with
 * `ctx.setEvent`. Published values are log events (`STEP_COMPLETED`, `kind: 'event'`), so the
 * fold keeps the latest per key and the reader needs nothing but the log: it reads the state
 * until the key is there, the execution ends, or `timeoutMs` passes.
 */
import { z } from 'zod';
import { optionalDurationMs } from './durations.js';
import { ExecutionNotFoundError } from './errors.js';
import { isTerminalStatus } from './events.js';
import type { ExecutionState } from './fold.js';
import { executionIdSchema, nameSchema } from './ids.js';
import { parseWith } from './workflow.js';

/** Options of `runtime.getEvent`. */
export interface GetEventOptions {
  /**
   * How long to wait for the first value under the key, in ms; 0 answers at once
   * (default: 60 000). The wait reads the log, so it outlasts restarts of the execution.
   */
  timeoutMs?: number;
}

/** Default wait of `runtime.getEvent` for a key not yet published. */
export const DEFAULT_GET_EVENT_TIMEOUT_MS = 60_000;

const requestSchema = z.object({ executionId: executionIdSchema, key: nameSchema });

/** First and longest pause between two reads of the log while waiting for a key. */
const FIRST_POLL_MS = 5;
const MAX_POLL_MS = 200;

/**
 * The latest value published under `key`, or undefined when none was published by the time
 * the execution ended or `timeoutMs` passed. Throws `ExecutionNotFoundError` for an unknown id.
 */
export async function getEvent(
  loadState: (executionId: string) => Promise<ExecutionState | null>,
  executionId: string,
  key: string,
  options: GetEventOptions = {},
): Promise<unknown> {
  const request = parseWith(requestSchema, { executionId, key }, 'getEvent request', 'getEvent');
  const timeoutMs =
    optionalDurationMs(options.timeoutMs, 'getEvent options', 'timeoutMs') ?? DEFAULT_GET_EVENT_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  let delay = FIRST_POLL_MS;
  for (;;) {
    const state = await loadState(request.executionId);
    if (state === null) throw new ExecutionNotFoundError(request.executionId);
    const entry = state.published?.find((published) => published.key === request.key);
    if (entry !== undefined) return entry.value;
    const left = deadline - Date.now();
    if (isTerminalStatus(state.status) || left <= 0) return undefined;
    await new Promise((resolve) => setTimeout(resolve, Math.min(delay, left)));
    delay = Math.min(delay * 2, MAX_POLL_MS);
  }
}
