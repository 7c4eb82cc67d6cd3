/**
 * Recovery of abandoned executions (docs/architecture.md#recovery): walk the `pending`/`running` executions, ask a
 * predicate the caller must supply, re-read each one right before acting, and resume it
 * through `runtime.execute` (which appends `EXECUTION_RECOVERED` under a new fence).
 */
import { InvalidInputError } from './errors.js';
import type { ExecutionStatus } from './events.js';
import type { ExecutionState } from './fold.js';
import type { EventStore, ExecutionSummary } from './spi.js';

/** Decides whether an execution is abandoned (its owner is gone). */
export type AbandonedPredicate = (execution: ExecutionSummary) => boolean | Promise<boolean>;

/** Options of {@link recoverAbandoned}. */
export interface RecoverAbandonedOptions {
  /**
   * Required, no default: which executions are abandoned. A live owner's execution taken over
   * by mistake runs its in-flight step twice, so only the caller can say what "abandoned"
   * means (`leaseExpired(stores)` is a ready one).
   */
  isAbandoned: AbandonedPredicate;
  /** Candidates to consider (default: every `pending`/`running` execution, paged by id). */
  source?: AsyncIterable<ExecutionSummary>;
  /** Resumes in flight at once (default: 10). */
  concurrency?: number;
}

/** What a {@link recoverAbandoned} pass did. */
export interface RecoveryReport {
  /** Candidates looked at. */
  scanned: number;
  /** Executions resumed by this pass, in the order they settled. */
  recovered: string[];
  /** Candidates left alone: not abandoned, or no longer pending/running when re-read. */
  skipped: number;
  /** Candidates whose check or resume threw; they are left for the next pass. */
  errors: [executionId: string, error: unknown][];
}

/** The runtime surface a pass needs (a `Runtime` has it). */
export interface RecoverableRuntime {
  readonly stores: { readonly events: EventStore };
  execute(request: { executionId: string; workflow: string }): Promise<ExecutionState>;
}

const RECOVERABLE: readonly ExecutionStatus[] = ['pending', 'running'];
const PAGE_SIZE = 500;

/** Every execution with one of `statuses`, page by page in id order. */
export async function* walkExecutions(
  events: EventStore,
  statuses: readonly ExecutionStatus[],
  pageSize = PAGE_SIZE,
): AsyncGenerator<ExecutionSummary> {
  let cursor: string | undefined;
  do {
    const page = await events.listExecutions({ status: statuses, limit: pageSize, cursor });
    yield* page.items;
    cursor = page.nextCursor;
  } while (cursor !== undefined);
}

/**
 * Resume every abandoned execution once. A resume that throws is reported in `errors` and
 * left for the next pass; a listing failure rejects the pass.
 * @example
 * const report = await recoverAbandoned(runtime, { isAbandoned: leaseExpired(stores) });
 */
export async function recoverAbandoned(
  runtime: RecoverableRuntime,
  options: RecoverAbandonedOptions,
): Promise<RecoveryReport> {
  const { isAbandoned, concurrency } = validate(options);
  const source = options.source ?? walkExecutions(runtime.stores.events, RECOVERABLE);
  const report: RecoveryReport = { scanned: 0, recovered: [], skipped: 0, errors: [] };
  const iterator = source[Symbol.asyncIterator]();
  const lane = async () => {
    for (let next = await iterator.next(); next.done !== true; next = await iterator.next()) {
      report.scanned += 1;
      await recoverOne(runtime, isAbandoned, next.value, report);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return report;
}

async function recoverOne(
  runtime: RecoverableRuntime,
  isAbandoned: AbandonedPredicate,
  candidate: ExecutionSummary,
  report: RecoveryReport,
): Promise<void> {
  const { executionId } = candidate;
  try {
    if (!RECOVERABLE.includes(candidate.status) || !(await isAbandoned(candidate))) {
      report.skipped += 1;
      return;
    }
    // Re-read right before acting: an owner that made progress since the listing is alive.
    const fresh = await runtime.stores.events.getExecution(executionId);
    if (fresh === null || !RECOVERABLE.includes(fresh.status) || fresh.sequence !== candidate.sequence) {
      report.skipped += 1;
      return;
    }
    await runtime.execute({ executionId, workflow: fresh.workflow });
    report.recovered.push(executionId);
  } catch (error) {
    report.errors.push([executionId, error]);
  }
}

function validate(options: RecoverAbandonedOptions): {
  isAbandoned: AbandonedPredicate;
  concurrency: number;
} {
  const given = options as Partial<RecoverAbandonedOptions> | undefined;
  if (typeof given?.isAbandoned !== 'function') {
    throw new InvalidInputError('recoverAbandoned options', [
      {
        path: 'isAbandoned',
        message:
          'required, no default: a predicate that says which executions are abandoned (e.g. leaseExpired(stores))',
      },
    ]);
  }
  const concurrency = given.concurrency ?? 10;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new InvalidInputError('recoverAbandoned options', [
      { path: 'concurrency', message: `must be an integer >= 1, got ${String(concurrency)}` },
    ]);
  }
  return { isAbandoned: given.isAbandoned, concurrency };
}
