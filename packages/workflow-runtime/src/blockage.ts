/**
 * Blockages (adr/0058): a run that fails with an error every run of the same log meets again
 * (`NonDeterminismError` after a deploy that changed the code under running executions) is
 * recorded in `stores.blockages` at the log's last seq. Readers see it (`loadState(id).blocked`,
 * `list({ blocked: true })`) while the log still ends there; the maintenance and supervisors
 * back off between automatic attempts and report it once, not at every pass.
 */
import { ErrorCodes } from './errors.js';
import type { Blockage, BlockageStore, ExecutionSummary, Stores } from './spi.js';

/** Longest message a blockage keeps, in UTF-16 code units. */
export const MAX_BLOCKAGE_MESSAGE = 1_000;

/** Pause before the first automatic retry of a blocked execution, doubled per attempt. */
const FIRST_RETRY_MS = 1_000;
/** Longest pause between automatic retries of a blocked execution. */
const MAX_RETRY_MS = 300_000;

/** The codes of the errors a run meets again at every attempt on the same log. */
const BLOCKING_CODES: ReadonlySet<string> = new Set([ErrorCodes.NonDeterminism]);

/** What readers see of a standing blockage (`ExecutionState.blocked`, list items). */
export interface ExecutionBlocked {
  /** Stable code of the error (`NON_DETERMINISM`). */
  code: string;
  /** The error's message. */
  message: string;
  /** When a run first failed at this point of the log, in ms since the epoch. */
  since: number;
  /** Runs that failed at this point so far. */
  attempts: number;
  /** When the latest failed, in ms since the epoch. */
  lastAt: number;
  /** The earliest time the maintenance or a supervisor tries again (a user's `execute` may try any time). */
  retryAt: number;
}

/** Whether `error` blocks its execution: matched by `code`, so a copy of the error from elsewhere counts. */
export function isBlockingError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' && BLOCKING_CODES.has(code);
}

/** Whether `blockage` still stands: the log ends where the failed run found it. */
export function blockageStands(blockage: Blockage, summary: Pick<ExecutionSummary, 'sequence'>): boolean {
  return blockage.seq === summary.sequence;
}

/** The earliest time of the next automatic attempt: 1 s after the first failure, doubling, at most 5 min. */
export function blockedRetryAt(blockage: Blockage): number {
  const pause = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.min(30, blockage.attempts - 1));
  return blockage.lastAt + pause;
}

/** A blockage as readers see it. */
export function blockedView(blockage: Blockage): ExecutionBlocked {
  const { code, message, since, attempts, lastAt } = blockage;
  return { code, message, since, attempts, lastAt, retryAt: blockedRetryAt(blockage) };
}

/** The standing blockage of `summary`'s execution as readers see it, or undefined. */
export async function standingBlockage(
  blockages: BlockageStore | undefined,
  summary: Pick<ExecutionSummary, 'executionId' | 'sequence'>,
): Promise<ExecutionBlocked | undefined> {
  const row = await blockages?.get(summary.executionId);
  return row === null || row === undefined || !blockageStands(row, summary) ? undefined : blockedView(row);
}

/** A message a store can keep: well-formed, without U+0000, at most {@link MAX_BLOCKAGE_MESSAGE}. */
function storable(message: string): string {
  const cut =
    message.length > MAX_BLOCKAGE_MESSAGE ? `${message.slice(0, MAX_BLOCKAGE_MESSAGE - 1)}…` : message;
  // Node 20 has no String.prototype.toWellFormed; a lone surrogate (the cut may make one) becomes U+FFFD.
  return cut.replaceAll('\u0000', '\uFFFD').replace(/\p{Surrogate}/gu, '\uFFFD');
}

/**
 * Record that a run of `executionId` failed with `error` while the log ended at `seq`, when
 * `error` blocks (else nothing). Resolves with the row as stored, or undefined when nothing
 * was recorded; a store failure goes to `onError` (the run's own error is what its caller gets).
 */
export async function recordBlockage(
  deps: { stores: Stores; clock: () => number; onError: (error: unknown, context: string) => void },
  executionId: string,
  seq: number,
  error: unknown,
): Promise<Blockage | undefined> {
  const blockages = deps.stores.blockages;
  if (blockages === undefined || !isBlockingError(error)) return undefined;
  const { code, message } = error as { code: string; message?: unknown };
  try {
    return await blockages.record({
      executionId,
      seq,
      code,
      message: storable(typeof message === 'string' ? message : String(message)),
      at: deps.clock(),
    });
  } catch (failure) {
    deps.onError(failure, `record the blockage of execution "${executionId}"`);
    return undefined;
  }
}

/**
 * For the maintenance and supervisors: whether an automatic attempt on `summary`'s execution
 * must wait, because its blockage stands and its back-off has not passed. A row the log has
 * moved past is deleted on the way (one at a later seq than `summary` is newer than the read).
 */
export async function backingOff(
  stores: Stores,
  summary: Pick<ExecutionSummary, 'executionId' | 'sequence'>,
  now: number,
): Promise<boolean> {
  const row = await stores.blockages?.get(summary.executionId);
  if (row === null || row === undefined) return false;
  if (row.seq < summary.sequence) await stores.blockages?.clear(summary.executionId);
  if (!blockageStands(row, summary)) return false;
  return now < blockedRetryAt(row);
}

/**
 * For the maintenance and supervisors: whether `error`, from a run of `executionId`, repeats a
 * blockage reported before (its row counts more than one attempt), so it is not reported again.
 */
export async function repeatsBlockage(stores: Stores, executionId: string, error: unknown): Promise<boolean> {
  if (!isBlockingError(error)) return false;
  const row = await stores.blockages?.get(executionId);
  return (
    row !== null && row !== undefined && row.attempts > 1 && row.code === (error as { code: string }).code
  );
}
