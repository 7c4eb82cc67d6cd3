/**
 * The checks a crash test makes on each outcome, beyond the log invariants: the log at the
 * crash is a prefix of the final log, each step attempt ran as often as the log allows, and
 * the outcome equals the uncrashed run's.
 */
import { inspect, isDeepStrictEqual } from 'node:util';
import type {
  Envelope,
  ExecutionState,
  StepCompletedPayload,
  StepFailedPayload,
} from '@skein/workflow-runtime';
import type { Effects } from './effects.js';
import type { Violation } from './errors.js';

/** Step attempts whose outcome (`STEP_COMPLETED` or `STEP_FAILED`) the log holds, keyed `name#attempt`. */
export function finishedAttempts(log: readonly Envelope[]): Map<string, number> {
  const finished = new Map<string, number>();
  for (const event of log) {
    if (event.type !== 'STEP_COMPLETED' && event.type !== 'STEP_FAILED') continue;
    const payload = event.payload as StepCompletedPayload | StepFailedPayload;
    if ('kind' in payload && payload.kind !== 'step') continue;
    const key = `${payload.name}#${payload.attempt ?? 1}`;
    finished.set(key, (finished.get(key) ?? 0) + 1);
  }
  return finished;
}

/** Step attempts the log started (`STEP_STARTED`), keyed `name#attempt`. */
function startedAttempts(log: readonly Envelope[]): Map<string, number> {
  const started = new Map<string, number>();
  for (const event of log) {
    if (event.type !== 'STEP_STARTED') continue;
    const payload = event.payload as { name: string; attempt: number };
    const key = `${payload.name}#${payload.attempt}`;
    started.set(key, (started.get(key) ?? 0) + 1);
  }
  return started;
}

/** L1 across the crash: recovery only appended; the log at the crash is a prefix of the final one. */
export function checkAppendOnly(atCrash: readonly Envelope[], final: readonly Envelope[]): Violation[] {
  const changed = atCrash.findIndex((event, i) => final[i]?.envelopeId !== event.envelopeId);
  if (changed < 0) return [];
  return [
    {
      invariant: 'append-only',
      message: `seq ${changed} was ${atCrash[changed]!.type} at the crash and is ${final[changed]?.type ?? 'gone'} after recovery`,
    },
  ];
}

/**
 * Each attempt of a tracked step (see `Effects.track`) that the final log finished ran exactly once, except one that was interrupted
 * by the crash (it ran before the crash, and its outcome was not yet in the log), which may
 * have run twice. Without a crash (`atCrash` undefined) every finished attempt ran exactly once.
 * An attempt the log started and never finished (a race's loser still running when the body
 * returned) may have run once for each start.
 */
export function checkEffects(
  effects: Effects,
  final: readonly Envelope[],
  atCrash?: readonly Envelope[],
): Violation[] {
  const finished = finishedAttempts(final);
  const started = startedAttempts(final);
  const startedAtCrash = atCrash === undefined ? new Map<string, number>() : startedAttempts(atCrash);
  const finishedAtCrash = atCrash === undefined ? new Map<string, number>() : finishedAttempts(atCrash);
  const keys = new Set([...finished.keys(), ...effects.records.map((run) => `${run.name}#${run.attempt}`)]);
  // Steps the workflow does not track are not counted.
  const tracked = [...keys].filter((key) => effects.tracked.has(key.slice(0, key.lastIndexOf('#'))));
  const violations: Violation[] = [];
  for (const key of tracked) {
    const [name, attempt] = [key.slice(0, key.lastIndexOf('#')), Number(key.slice(key.lastIndexOf('#') + 1))];
    const ran = effects.count(name, attempt);
    const inLog = finished.get(key) ?? 0;
    const beforeCrash = effects.count(name, attempt, 'before-crash');
    // Starts the crash left unfinished are the interrupted ones, counted below.
    const openAtCrash = Math.max(0, (startedAtCrash.get(key) ?? 0) - (finishedAtCrash.get(key) ?? 0));
    const abandoned = Math.max(0, (started.get(key) ?? 0) - inLog - openAtCrash);
    const interrupted =
      (atCrash === undefined ? 0 : Math.max(0, beforeCrash - (finishedAtCrash.get(key) ?? 0))) + abandoned;
    if (ran < inLog || ran > inLog + interrupted) {
      const allowed =
        interrupted > 0 ? `${inLog} to ${inLog + interrupted} (interrupted or abandoned)` : `${inLog}`;
      violations.push({
        invariant: 'effects',
        message: `step "${name}" attempt ${attempt} ran ${ran} time(s) (${beforeCrash} before the crash); the log finished it ${inLog} time(s), so it may run ${allowed}`,
      });
    }
  }
  return violations;
}

/** The crashed and recovered execution ends like the uncrashed one: same status and output. */
export function checkOutcome(reference: ExecutionState, final: ExecutionState): Violation[] {
  if (final.status !== reference.status) {
    return [
      { invariant: 'output', message: `ended ${final.status}, the uncrashed run ended ${reference.status}` },
    ];
  }
  if (!isDeepStrictEqual(final.output, reference.output)) {
    return [
      {
        invariant: 'output',
        message: `output ${inspect(final.output)} differs from the uncrashed run's ${inspect(reference.output)}`,
      },
    ];
  }
  return [];
}

/**
 * Continue-as-new links (adr/0063), on the final logs: every execution that ended
 * `EXECUTION_CONTINUED` names a successor whose seq 0 names it back, and every successor's
 * predecessor ended continued as it (a crash between the two writes was finished by recovery).
 */
export function checkChains(logs: ReadonlyMap<string, readonly Envelope[]>): Violation[] {
  const violations: Violation[] = [];
  for (const [id, log] of logs) {
    const last = log.at(-1);
    if (last?.type === 'EXECUTION_CONTINUED') {
      const successorId = last.payload.successorId;
      const first = logs.get(successorId)?.[0];
      const from = first?.type === 'EXECUTION_STARTED' ? first.payload.continuedFrom : undefined;
      if (from?.executionId !== id)
        violations.push({
          invariant: 'chain',
          message: `"${id}" continued as "${successorId}", whose seq 0 ${first === undefined ? 'is missing' : 'names no such predecessor'}`,
        });
    }
    const first = log[0];
    const from = first?.type === 'EXECUTION_STARTED' ? first.payload.continuedFrom : undefined;
    if (from === undefined) continue;
    const end = logs.get(from.executionId)?.at(-1);
    if (end?.type !== 'EXECUTION_CONTINUED' || end.payload.successorId !== id)
      violations.push({
        invariant: 'chain',
        message: `"${id}" continues "${from.executionId}", which did not end continued as it (${end?.type ?? 'no log'})`,
      });
  }
  return violations;
}
