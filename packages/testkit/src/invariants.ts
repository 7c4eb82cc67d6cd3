/**
 * The log invariant checker: L1, L2, L3 and L6 on any log, and L5 (snapshot fold equals fold
 * from zero) on a set of stores. L4 (per-caller batch outcomes) and L7 (nothing half-written)
 * are properties of calls, not of a finished log: the conformance suites and the runtime's
 * tests prove them.
 */
import { isDeepStrictEqual } from 'node:util';
import { type Envelope, type EventType, fold, loadState, type Stores } from '@skein/workflow-runtime';
import { isTerminalType, toEnvelope } from '@skein/workflow-runtime/internal';
import type { StoredEvent } from '@skein/workflow-runtime/spi';
import { InvariantViolationError, type Violation } from './errors.js';

/** What the checker reads of each event: a decoded `Envelope` and a `StoredEvent` both fit. */
export type LogEntry = Pick<Envelope | StoredEvent, 'executionId' | 'seq' | 'envelopeId' | 'type' | 'fence'>;

/**
 * Check L1 (seq dense from 0, envelope ids unique, one execution), L2 (seq 0, and only seq 0,
 * is `EXECUTION_STARTED`), L3 (fences never decrease along the log) and L6 (nothing after a
 * terminal event). An empty log breaks nothing.
 * @returns every violation found, in log order; empty when the log is sound.
 */
export function checkLog(log: readonly LogEntry[]): Violation[] {
  const violations: Violation[] = [];
  const add = (invariant: string, message: string) => violations.push({ invariant, message });
  const seen = new Set<string>();
  log.forEach((event, i) => {
    const before = log[i - 1];
    if (before !== undefined && event.seq === before.seq) add('L1', `seq ${event.seq} appears twice`);
    else if (event.seq !== i) add('L1', `position ${i} holds seq ${event.seq} (seq must be dense from 0)`);
    if (event.executionId !== log[0]!.executionId) {
      add('L1', `seq ${event.seq} belongs to execution "${event.executionId}", not "${log[0]!.executionId}"`);
    }
    if (seen.has(event.envelopeId)) add('L1', `seq ${event.seq} reuses envelope id ${event.envelopeId}`);
    seen.add(event.envelopeId);
    if ((i === 0) !== (event.type === 'EXECUTION_STARTED')) {
      add(
        'L2',
        i === 0
          ? `seq 0 is ${event.type}, not EXECUTION_STARTED`
          : `EXECUTION_STARTED again at seq ${event.seq}`,
      );
    }
    if (before !== undefined && event.fence < before.fence) {
      add(
        'L3',
        `fence goes back from ${before.fence} (seq ${before.seq}) to ${event.fence} (seq ${event.seq})`,
      );
    }
    if (before !== undefined && isTerminalType(before.type) && !redrives(before.type, event.type)) {
      add('L6', `${event.type} at seq ${event.seq} follows terminal ${before.type as EventType}`);
    }
  });
  return violations;
}

/**
 * Throw `InvariantViolationError` listing every violation {@link checkLog} finds.
 * @example
 * assertInvariants(await runtime.history('order-42'));
 */
export function assertInvariants(log: readonly LogEntry[]): void {
  const violations = checkLog(log);
  if (violations.length > 0) throw new InvariantViolationError(log[0]?.executionId ?? '', violations);
}

/**
 * L5: the state loaded from the newest snapshot plus the events after it equals the fold of
 * the whole log from zero.
 * @returns a one-element list naming the first differing field, or empty when they agree.
 */
export async function checkSnapshots(
  stores: Pick<Stores, 'events' | 'snapshots'>,
  executionId: string,
): Promise<Violation[]> {
  const events = await stores.events.read(executionId, 0);
  const fromZero = fold(events.map((event) => toEnvelope(event)));
  const fromSnapshot = await loadState(stores, executionId);
  if (isDeepStrictEqual(fromSnapshot, fromZero)) return [];
  const snapshot = await stores.snapshots.latest(executionId);
  const fields = new Set([...Object.keys(fromZero ?? {}), ...Object.keys(fromSnapshot ?? {})]);
  const differing = [...fields].filter(
    (field) => !isDeepStrictEqual(fromZero?.[field as 'status'], fromSnapshot?.[field as 'status']),
  );
  return [
    {
      invariant: 'L5',
      message: `fold from the snapshot at seq ${snapshot?.seq ?? 'none'} differs from fold from zero in: ${differing.join(', ')}`,
    },
  ];
}

/** An operator's resume (`EXECUTION_REDRIVEN`) may follow a failure or a dead letter (adr/0067). */
function redrives(terminal: string, next: string): boolean {
  return (
    next === 'EXECUTION_REDRIVEN' &&
    (terminal === 'EXECUTION_FAILED' || terminal === 'EXECUTION_DEAD_LETTERED')
  );
}
