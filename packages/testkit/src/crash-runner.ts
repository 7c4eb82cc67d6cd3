/**
 * The crash runner: run an execution once uncrashed to number its writes, then crash it at
 * each write and recover it with fresh runtimes over the same stores, checking every outcome.
 */

import { inspect } from 'node:util';
import {
  type Envelope,
  type ExecuteRequest,
  type ExecutionState,
  fold,
  InvalidInputError,
  isTerminalStatus,
  readHistory,
  type Stores,
} from '@skein/workflow-runtime';
import { checkAppendOnly, checkChains, checkEffects, checkOutcome } from './crash-checks.js';
import {
  type CrashTestOptions,
  instantiate,
  type ResolvedCrashOptions,
  resolveOptions,
  type WorkflowUnderTest,
} from './crash-options.js';
import { type DriveResult, driveToEnd } from './drive.js';
import { Effects } from './effects.js';
import { CrashInvariantError, type CrashPoint, SimulatedCrashError, type Violation } from './errors.js';
import { faultyStore, type WriteOp } from './faulty-store.js';
import { checkLog, checkSnapshots } from './invariants.js';
import { VirtualClock } from './virtual-clock.js';

/** The uncrashed run: its writes in order, its final state and its log. */
export interface Reference {
  /** The operation of each write, in order; a crash test crashes at each index. */
  writes: readonly WriteOp[];
  state: ExecutionState;
  log: readonly Envelope[];
}

/** What happened at one crash point; every check passed. */
export interface CrashOutcome extends CrashPoint {
  /** The operation of write `k`. */
  op: WriteOp;
  /** Events in the log at the crash, and after recovery. */
  eventsAtCrash: number;
  events: number;
  /** `execute`/`wake` calls the recovery needed. */
  recoveryCalls: number;
  /** Final status (the uncrashed run's). */
  status: ExecutionState['status'];
}

/** What `crashAtEveryWrite` checked. */
export interface CrashReport {
  executionId: string;
  /** Writes of the uncrashed run (W); every index 0..W-1 was crashed at. */
  writes: number;
  reference: { status: ExecutionState['status']; output: unknown; events: number };
  outcomes: CrashOutcome[];
}

/** Options of {@link crashAt}: the crash test options, plus a reference run to reuse. */
export interface CrashAtOptions extends CrashTestOptions {
  /** The uncrashed run to compare with (default: made by `referenceRun` first). */
  reference?: Reference;
}

/** Stores, clock and workflow of one run. */
async function setUp(workflow: WorkflowUnderTest, input: unknown, options: ResolvedCrashOptions) {
  const effects = new Effects();
  const definition = instantiate(workflow, effects);
  const children = options.workflows.map((child) => instantiate(child, effects));
  const request: ExecuteRequest = { executionId: options.executionId, workflow: definition.name, input };
  const inner = await options.openStores();
  const clock = new VirtualClock(options.clockStart);
  return { effects, definition, children, request, inner, clock };
}

function drive(
  run: Awaited<ReturnType<typeof setUp>>,
  stores: Stores,
  options: ResolvedCrashOptions,
  onError: (error: unknown) => void,
): Promise<DriveResult> {
  const { definition: workflow, children: workflows, request, clock } = run;
  const { snapshotEvery, claimLapseMs, maxCalls, signals, updates, resume, start } = options;
  return driveToEnd(
    {
      stores,
      workflow,
      workflows,
      signals,
      updates,
      request,
      clock,
      snapshotEvery,
      claimLapseMs,
      onError,
      resume,
      start,
    },
    maxCalls,
  );
}

/**
 * Run the execution without a crash (fresh stores, a virtual clock) and number its writes.
 * Throws `CrashInvariantError` (with a null crash point) when it does not end, or when its
 * log, effects or snapshots are already wrong.
 */
export async function referenceRun(
  workflow: WorkflowUnderTest,
  input: unknown,
  options: CrashTestOptions = {},
): Promise<Reference> {
  const resolved = resolveOptions(options);
  const run = await setUp(workflow, input, resolved);
  const stores = faultyStore(run.inner);
  const violations: Violation[] = [];
  const onError = (error: unknown) =>
    violations.push({ invariant: 'runtime', message: `background error: ${describe(error)}` });
  try {
    const result = await drive(run, stores, resolved, onError);
    const log = await readHistory(run.inner.events, resolved.executionId);
    const others = await otherLogs(run.inner, resolved.executionId);
    violations.push(
      ...checkLog(log),
      ...[...others.values()].flatMap((other) => checkLog(other)),
      ...checkEffects(run.effects, [...log, ...[...others.values()].flat()]),
      ...checkChains(new Map([...others, [resolved.executionId, log]])),
      ...(await checkAllSnapshots(run.inner, resolved.executionId, others)),
    );
    if (result.kind !== 'terminal') violations.unshift(notEnded(result));
    if (violations.length > 0 || result.kind !== 'terminal') {
      const cause = result.kind === 'error' ? result.error : undefined;
      throw new CrashInvariantError(resolved.executionId, null, '', unique(violations), typesOf(log), {
        cause,
      });
    }
    return { writes: stores.writes.map((write) => write.op), state: result.state, log };
  } finally {
    await run.inner.close();
  }
}

/**
 * Crash the execution at one write and recover it; check L1–L3, L5, L6, effects and output.
 * @returns the outcome; throws `CrashInvariantError` naming the crash point and what broke.
 */
export async function crashAt(
  workflow: WorkflowUnderTest,
  input: unknown,
  point: CrashPoint,
  options: CrashAtOptions = {},
): Promise<CrashOutcome> {
  const resolved = resolveOptions(withoutReference(options));
  const reference = options.reference ?? (await referenceRun(workflow, input, resolved));
  const op = reference.writes[point.k];
  if (!Number.isInteger(point.k) || op === undefined || (point.when !== 'before' && point.when !== 'after')) {
    const issues = [];
    if (!Number.isInteger(point.k) || op === undefined)
      issues.push({
        path: 'point.k',
        message: `must be an integer in 0..${reference.writes.length - 1}, got ${String(point.k)}`,
      });
    if (point.when !== 'before' && point.when !== 'after')
      issues.push({
        path: 'point.when',
        message: `must be "before" or "after", got ${JSON.stringify(point.when)}`,
      });
    throw new InvalidInputError('crashAt', issues);
  }
  const run = await setUp(workflow, input, resolved);
  try {
    return await crashAndRecover(run, reference, { ...point, op }, resolved);
  } finally {
    await run.inner.close();
  }
}

async function crashAndRecover(
  run: Awaited<ReturnType<typeof setUp>>,
  reference: Reference,
  point: CrashPoint & { op: WriteOp },
  options: ResolvedCrashOptions,
): Promise<CrashOutcome> {
  const { executionId } = options;
  const violations: Violation[] = [];
  const note = (invariant: string) => (error: unknown) => {
    if (!isCrash(error)) violations.push({ invariant, message: `background error: ${describe(error)}` });
  };
  const faulty = faultyStore(run.inner, { at: point.k, fault: `crash-${point.when}` });
  const crashed = await drive(run, faulty, options, note('runtime'));
  violations.push(...crashViolations(crashed, faulty.crash, point));
  const atCrash = await readHistory(run.inner.events, executionId);
  const othersAtCrash = await otherLogs(run.inner, executionId);
  run.effects.phase = 'recovery';
  const recovered = await drive(run, run.inner, options, note('recovery'));
  const log = await readHistory(run.inner.events, executionId);
  const others = await otherLogs(run.inner, executionId);
  violations.push(...checkLog(atCrash), ...checkLog(log), ...checkAppendOnly(atCrash, log));
  violations.push(...checkChains(new Map([...others, [executionId, log]])));
  for (const [id, other] of others) {
    const before = othersAtCrash.get(id) ?? [];
    violations.push(...checkLog(other), ...checkAppendOnly(before, other));
    if (!isTerminalStatus(fold(other)?.status ?? 'pending'))
      violations.push({ invariant: 'recovery', message: `child "${id}" did not end` });
  }
  violations.push(
    ...checkEffects(
      run.effects,
      [...log, ...[...others.values()].flat()],
      [...atCrash, ...[...othersAtCrash.values()].flat()],
    ),
    ...(await checkAllSnapshots(run.inner, executionId, others)),
  );
  if (recovered.kind !== 'terminal') violations.push(notEnded(recovered));
  else if (options.outcomeAccepted === undefined)
    violations.push(...checkOutcome(reference.state, recovered.state));
  else if (!options.outcomeAccepted(recovered.state, reference.state))
    violations.push({
      invariant: 'output',
      message: `outcome ${recovered.state.status} ${inspect(recovered.state.output)} was not accepted`,
    });
  if (violations.length > 0) {
    const cause = recovered.kind === 'error' ? recovered.error : undefined;
    const where = { k: point.k, when: point.when };
    throw new CrashInvariantError(executionId, where, point.op, unique(violations), typesOf(log), { cause });
  }
  return {
    ...point,
    eventsAtCrash: atCrash.length,
    events: log.length,
    recoveryCalls: recovered.calls,
    status: (recovered as { state: ExecutionState }).state.status,
  };
}

/** The crashed drive must have died of the planned crash, at the planned write. */
function crashViolations(
  result: DriveResult,
  crash: SimulatedCrashError | undefined,
  point: CrashPoint & { op: WriteOp },
): Violation[] {
  if (crash === undefined) {
    return [
      {
        invariant: 'determinism',
        message: `the run never reached write ${point.k} (${point.op}); it ended ${result.kind}`,
      },
    ];
  }
  if (crash.write.op !== point.op) {
    return [
      {
        invariant: 'determinism',
        message: `write ${point.k} is ${crash.write.op} here, ${point.op} in the uncrashed run`,
      },
    ];
  }
  if (result.kind === 'error' && !isCrash(result.error)) {
    return [
      {
        invariant: 'runtime',
        message: `the crashed attempt failed with ${describe(result.error)}, not the simulated crash`,
      },
    ];
  }
  return [];
}

/**
 * Crash the execution at every write of its uncrashed run, before and after each, and
 * recover it each time (see {@link crashAt}).
 * @returns the report of every crash point; throws `CrashInvariantError` at the first that breaks an invariant.
 * @example
 * const report = await crashAtEveryWrite((effects) => defineWorkflow({ ... }), input);
 * expect(report.outcomes).toHaveLength(2 * report.writes);
 */
export async function crashAtEveryWrite(
  workflow: WorkflowUnderTest,
  input: unknown,
  options: CrashTestOptions = {},
): Promise<CrashReport> {
  const resolved = resolveOptions(options);
  const reference = await referenceRun(workflow, input, resolved);
  const outcomes: CrashOutcome[] = [];
  for (let k = 0; k < reference.writes.length; k++) {
    for (const when of resolved.when)
      outcomes.push(await crashAt(workflow, input, { k, when }, { ...resolved, reference }));
  }
  const { status, output } = reference.state;
  return {
    executionId: resolved.executionId,
    writes: reference.writes.length,
    reference: { status, output, events: reference.log.length },
    outcomes,
  };
}

/** The logs of every execution in `stores` but `executionId` (the children it started), by id. */
async function otherLogs(stores: Stores, executionId: string): Promise<Map<string, Envelope[]>> {
  const logs = new Map<string, Envelope[]>();
  let cursor: string | undefined;
  do {
    const page = await stores.events.listExecutions(cursor === undefined ? {} : { cursor });
    for (const item of page.items) {
      if (item.executionId !== executionId)
        logs.set(item.executionId, await readHistory(stores.events, item.executionId));
    }
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return logs;
}

/** L5 for the execution and each of its children. */
async function checkAllSnapshots(
  stores: Stores,
  executionId: string,
  others: ReadonlyMap<string, unknown>,
): Promise<Violation[]> {
  const violations = await checkSnapshots(stores, executionId);
  for (const id of others.keys()) violations.push(...(await checkSnapshots(stores, id)));
  return violations;
}

/** A drive that did not reach a terminal state, as a violation. */
function notEnded(result: Exclude<DriveResult, { kind: 'terminal' }>): Violation {
  const why = result.kind === 'error' ? `failed: ${describe(result.error)}` : result.reason;
  return { invariant: 'recovery', message: `the execution did not end: ${why}` };
}

function withoutReference(options: CrashAtOptions): CrashTestOptions {
  const { reference: _reference, ...rest } = options;
  return rest;
}

/** A simulated crash, bare or as the cause of another error. */
function isCrash(error: unknown): boolean {
  for (
    let current = error, depth = 0;
    current instanceof Error && depth < 5;
    current = current.cause, depth++
  ) {
    if (current instanceof SimulatedCrashError) return true;
  }
  return false;
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

function typesOf(log: readonly Envelope[]): string[] {
  return log.map((event) => `${event.seq}:${event.type}@${event.fence}`);
}

function unique(violations: Violation[]): Violation[] {
  const seen = new Set<string>();
  return violations.filter((violation) => {
    const key = `${violation.invariant}|${violation.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
