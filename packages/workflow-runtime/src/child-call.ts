/**
 * `ctx.child`: start a child execution once, at a deterministic id, and wait for its end.
 * `CHILD_STARTED` is recorded after the child's seq 0 is durable (a replay that finds no record
 * starts it again, and starting an existing child of the same workflow returns it), and
 * `CHILD_SETTLED` once the parent observes the child's terminal state. While the child runs the
 * parent suspends on a periodic re-check timer, a fallback for a lost wake-up (adr/0014).
 */
import type { ChildOptions } from './context-api.js';
import { deadlineOf } from './deadlines.js';
import { CancelledError, ChildFailedError, InvalidInputError } from './errors.js';
import type { ChildSettledPayload, ChildStartedPayload, DeadlineRecord } from './events.js';
import type { CallRecord, ExecutionState } from './fold.js';
import { executionIdSchema, illFormedReason, MAX_EXECUTION_ID_LENGTH, newId } from './ids.js';
import { featuresOf, type RunFeatures, type RunInternals } from './run-internals.js';
import type { AnyWorkflow } from './workflow.js';

/** The id a child gets when the call names none: `<parent id>-child-<position>`. */
export function defaultChildId(parentId: string, position: number): string {
  return `${parentId}-child-${position}`;
}

/** A `ctx.child` call as its handle sees it (child-handle.ts). */
export interface ChildCall {
  /** The child's id, known when the call is made; undefined when the call failed at once. */
  childId: string | undefined;
  /** Settles once the child's seq 0 is durable and `CHILD_STARTED` recorded (or its start failed). */
  started: Promise<void>;
  /** The child's output, or the error it ended with (`ChildFailedError`). */
  outcome: Promise<unknown>;
}

/**
 * See the module comment. Takes its position synchronously, so the calls the body makes after
 * it (a handle's `signal`, `cancel`) take theirs in the same order on every replay.
 */
export function beginChild(
  run: RunInternals,
  workflow: AnyWorkflow,
  input: unknown,
  options: ChildOptions,
): ChildCall {
  try {
    return takeChildCall(run, workflow, input, options);
  } catch (error) {
    return { childId: undefined, started: Promise.resolve(), outcome: Promise.reject(error) };
  }
}

function takeChildCall(
  run: RunInternals,
  workflow: AnyWorkflow,
  input: unknown,
  options: ChildOptions,
): ChildCall {
  const features = featuresOf(run, 'ctx.child');
  // A bad id or deadline fails the call before it takes a position, as a bad name fails any other call.
  if (options.executionId !== undefined) checkedId(options.executionId);
  const deadline = deadlineOf(options, run.host.clock(), 'ctx.child options');
  const peeked = run.peek();
  let slot: { position: number; record: CallRecord | undefined };
  try {
    slot = run.next('child', workflow.name);
  } catch (error) {
    // Cancellation reaches the child this call waits on.
    if (error instanceof CancelledError && peeked?.childId !== undefined && peeked.status === 'started') {
      const outcome = (async () => {
        // The parent's cancellation is durable first: the child's end then finds it running, not waiting.
        await run.track(() => run.writer.flush());
        await features.cancelChild(
          peeked.childId!,
          `parent "${run.executionId}" was cancelled: ${error.reason}`,
        );
        throw error;
      })();
      return { childId: peeked.childId, started: Promise.resolve(), outcome };
    }
    throw error;
  }
  const { position, record } = slot;
  const done = Promise.resolve();
  if (record?.status === 'completed')
    return { childId: record.childId, started: done, outcome: Promise.resolve(record.output) };
  if (record?.status === 'failed') {
    const failed = childFailed(run, record.childId, record.childStatus, record.error);
    return { childId: record.childId, started: done, outcome: Promise.reject(failed) };
  }
  const childId =
    record?.childId ?? checkedId(options.executionId ?? defaultChildId(run.executionId, position));
  const started =
    record?.childId !== undefined
      ? done
      : start(run, features, workflow, childId, input, deadline).then(() => {
          const payload: ChildStartedPayload = {
            position,
            name: workflow.name,
            childId,
            version: workflow.version,
          };
          run.writer.record('CHILD_STARTED', payload, `start of child "${childId}"`);
        });
  started.catch(() => undefined); // the outcome carries the failure
  const outcome = started.then(() => awaitChild(run, features, position, workflow.name, childId, record));
  return { childId, started, outcome };
}

async function start(
  run: RunInternals,
  features: RunFeatures,
  workflow: AnyWorkflow,
  childId: string,
  input: unknown,
  deadline: DeadlineRecord | undefined,
): Promise<void> {
  await run.track(async () => {
    // The parent's own log (seq 0 at least) is durable before any child exists.
    await run.writer.flush();
    await features.startChild(workflow, childId, input, run.executionId, deadline);
  });
}

async function awaitChild(
  run: RunInternals,
  features: RunFeatures,
  position: number,
  name: string,
  childId: string,
  record: CallRecord | undefined,
): Promise<unknown> {
  const settled = await run.track(() => features.settledChild(childId));
  if (settled !== null) return settle(run, position, childId, record, settled);
  const now = run.host.clock();
  if (record?.timerId !== undefined && record.wakeAt !== undefined && record.wakeAt > now)
    return run.block(record.wakeAt, record.timerId, { child: childId });
  if (record?.timerId !== undefined) run.fireTimer(record.timerId, position);
  const timerId = newId();
  const dueAt = now + features.childRecheckMs;
  run.writer.record(
    'TIMER_SCHEDULED',
    { position, name, timerId, dueAt, purpose: 'child' },
    `re-check of child "${childId}"`,
  );
  return run.block(dueAt, timerId, { child: childId });
}

function settle(
  run: RunInternals,
  position: number,
  childId: string,
  record: CallRecord | undefined,
  child: ExecutionState,
): unknown {
  if (record?.timerId !== undefined) run.fireTimer(record.timerId, position);
  const payload: ChildSettledPayload =
    child.status === 'completed'
      ? { position, childId, status: child.status, output: child.output }
      : { position, childId, status: child.status, error: child.error };
  run.writer.record('CHILD_SETTLED', payload, `result of child "${childId}"`);
  if (child.status === 'completed') return child.output;
  throw childFailed(run, childId, child.status, child.error);
}

function childFailed(
  run: RunInternals,
  childId: string | undefined,
  status: string | undefined,
  cause: unknown,
): ChildFailedError {
  return new ChildFailedError(run.executionId, childId ?? '?', status ?? 'failed', { cause });
}

function checkedId(childId: string): string {
  if (executionIdSchema.safeParse(childId).success) return childId;
  const message =
    typeof childId !== 'string' || childId.length === 0 || childId.length > MAX_EXECUTION_ID_LENGTH
      ? `must be 1 to ${MAX_EXECUTION_ID_LENGTH} characters, got ${JSON.stringify(childId)}`
      : illFormedReason(childId)!;
  throw new InvalidInputError('ctx.child options', [{ path: 'executionId', message }]);
}
