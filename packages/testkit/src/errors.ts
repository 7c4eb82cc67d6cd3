/**
 * Every error the testkit raises. Each has a stable `code`, its `name` set, the structured
 * fields as properties, a message built from them, and the original kept as `cause`.
 */
import { SkeinError } from '@skein/workflow-runtime';

/** Stable codes of the errors of this package, by class (without the `Error` suffix). */
export const TestkitErrorCodes = {
  SimulatedCrash: 'SIMULATED_CRASH',
  InjectedFault: 'INJECTED_FAULT',
  InvariantViolation: 'INVARIANT_VIOLATED',
  CrashInvariant: 'CRASH_INVARIANT_VIOLATED',
} as const;

/** One of {@link TestkitErrorCodes}. */
export type TestkitErrorCode = (typeof TestkitErrorCodes)[keyof typeof TestkitErrorCodes];

/** Which store write a fault hit: its index among the wrapper's writes and the operation. */
export interface WriteRef {
  /** 0-based index among the writes made through the wrapper. */
  index: number;
  /** The operation, e.g. `events.append`. */
  op: string;
}

/**
 * A simulated process crash: the write it names was (`after`) or was not (`before`) applied,
 * and every later call on the same faulty stores rejects with this error.
 */
export class SimulatedCrashError extends SkeinError {
  constructor(
    readonly write: WriteRef,
    readonly when: 'before' | 'after',
    readonly call: string,
  ) {
    super(
      TestkitErrorCodes.SimulatedCrash,
      `simulated crash ${when} write ${write.index} (${write.op}); ${call} refused: the process is dead`,
    );
  }
}

/** A one-off failure injected into a write; the write was not applied. */
export class InjectedFaultError extends SkeinError {
  constructor(readonly write: WriteRef) {
    super(
      TestkitErrorCodes.InjectedFault,
      `injected failure of write ${write.index} (${write.op}); nothing was written`,
    );
  }
}

/** One broken invariant, as the checkers report it. */
export interface Violation {
  /** `L1`, `L2`, `L3`, `L5`, `L6`, or one of the crash checks: `append-only`, `effects`, `output`, `recovery`. */
  invariant: string;
  /** What is wrong, with the seq or step it concerns. */
  message: string;
}

/** A log (or a set of stores) broke one or more invariants. */
export class InvariantViolationError extends SkeinError {
  constructor(
    readonly executionId: string,
    readonly violations: readonly Violation[],
  ) {
    super(
      TestkitErrorCodes.InvariantViolation,
      `execution "${executionId}" breaks ${violations.length} invariant(s):\n${violations
        .map((violation) => `  ${violation.invariant}: ${violation.message}`)
        .join('\n')}`,
    );
  }
}

/** Where a crash test crashed: before or after write `k`. */
export interface CrashPoint {
  /** Index of the write among the execution's writes (the uncrashed run numbers them). */
  k: number;
  when: 'before' | 'after';
}

/** A crash test found a broken invariant for one crash point. */
export class CrashInvariantError extends SkeinError {
  constructor(
    readonly executionId: string,
    /** Where it crashed; null for the uncrashed reference run. */
    readonly point: CrashPoint | null,
    /** The operation of write `k` (empty for the reference run). */
    readonly op: string,
    readonly violations: readonly Violation[],
    /** The final log as `seq:TYPE@fence`, for reading the failure. */
    readonly log: readonly string[],
    options?: { cause?: unknown },
  ) {
    super(
      TestkitErrorCodes.CrashInvariant,
      `${point === null ? 'uncrashed run' : `crash ${point.when} write ${point.k} (${op})`} of execution "${executionId}": ${violations
        .map((violation) => `${violation.invariant} violated: ${violation.message}`)
        .join('; ')}\n  log: ${log.join(', ')}`,
      options,
    );
  }
}
