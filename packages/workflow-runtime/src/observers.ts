/**
 * `RuntimeObserver`, the SPI through which a runtime tells what it does: executions started,
 * recovered, resumed, suspended and settled, steps that ran (with attempts, durations and
 * outcomes), timers, signals received, children, cancellations and dead letters. Observers hear
 * of an event once it is durable, from the events this runtime appended: a replayed step
 * appends nothing, so it is never reported. Payloads (inputs, outputs, signal values) are left
 * out unless an observer sets `payloads: true`. An observer that throws (or rejects) is
 * reported to the runtime's `onError` and never breaks a run. With no observers the runtime
 * keeps no record of any of this (one `undefined` check per recorded event and per append).
 */
import type { EventType, ExecutionStatus } from './events.js';
import type { ExecutionState } from './fold.js';

/** What every notification says about its execution. */
export interface ObservedExecution {
  executionId: string;
  workflow: string;
  version: number;
  /** Fence of the writer that appended the event. */
  fence: number;
  /** Recorded time of the event (ms since the epoch). */
  at: number;
}

/** An error as observers see it: its name and message, never its fields or stack. */
export interface ObservedError {
  name: string;
  message: string;
}

/** One attempt of a step. */
export interface ObservedStep extends ObservedExecution {
  position: number;
  name: string;
  attempt: number;
}

/** A step attempt's end. */
export interface ObservedStepEnd extends ObservedStep {
  /** `retrying`: failed with budget left (`retryAt` says when); `failed`: out of budget. */
  outcome: 'completed' | 'retrying' | 'failed';
  /** When the attempt started, if this runtime appended its start (always, unless it crashed in between). */
  startedAt?: number;
  durationMs?: number;
  error?: ObservedError;
  retryAt?: number;
  /** The step's output (only for observers with `payloads: true`). */
  output?: unknown;
}

/** The status an execution settles in, by its terminal event (dead letters are reported apart). */
const SETTLED_STATUS = {
  EXECUTION_COMPLETED: 'completed',
  EXECUTION_FAILED: 'failed',
  EXECUTION_CANCELLED: 'cancelled',
  EXECUTION_CONTINUED: 'continued',
} as const;

/** An execution's end. */
export interface ObservedSettlement extends ObservedExecution {
  status: Extract<ExecutionStatus, 'completed' | 'failed' | 'cancelled' | 'dead_lettered' | 'continued'>;
  /** Recorded time of seq 0. */
  startedAt: number;
  durationMs: number;
  error?: ObservedError;
  /** The reason of a cancellation or a dead letter. */
  reason?: string;
  parentId?: string;
  /** The execution's output (only for observers with `payloads: true`). */
  output?: unknown;
  /**
   * Set when an operator resumed the execution (`runtime.resume`) before this settlement: how
   * many times, and when the newest resume was recorded. A resumed execution settles once more
   * per resume.
   */
  redriven?: { count: number; at: number };
}

/**
 * Hears what a runtime does; every method is optional. Register with
 * `createRuntime({ observers: [observer] })`.
 * @example
 * const log: RuntimeObserver = {
 *   stepSettled: (s) => console.log(`${s.executionId} ${s.name}#${s.attempt} ${s.outcome} in ${s.durationMs} ms`),
 * };
 */
export interface RuntimeObserver {
  /** Receive inputs, outputs and signal payloads (default: false, none). */
  readonly payloads?: boolean;
  /** Seq 0 is durable (a start, an enqueue, a child's start). */
  executionStarted?(e: ObservedExecution & { parentId?: string; input?: unknown }): void;
  /**
   * A running execution (its owner gone) was taken over here with a new fence
   * (`EXECUTION_RECOVERED`). A claim of pending work is `executionClaimed`, not this.
   */
  executionRecovered?(e: ObservedExecution & { reason: string }): void;
  /** Pending work (enqueued, or never run) was claimed and is run here (`EXECUTION_RECOVERED` with `claimed`). */
  executionClaimed?(e: ObservedExecution & { reason: string }): void;
  /** A suspended execution was resumed here (`EXECUTION_RESUMED`). */
  executionResumed?(e: ObservedExecution & { reason: string }): void;
  /** The execution suspended: on timers (`wakeAt`), signals or children. */
  executionSuspended?(
    e: ObservedExecution & { reason: string; wakeAt?: number; signals: string[]; children: string[] },
  ): void;
  /** The execution ended: completed, failed, cancelled or dead-lettered. */
  executionSettled?(e: ObservedSettlement): void;
  /**
   * An operator resumed a failed or dead-lettered execution (`EXECUTION_REDRIVEN`): it runs
   * again, and settles again. `count` is how many resumes it has had, this one included.
   */
  executionRedriven?(
    e: ObservedExecution & {
      from: 'failed' | 'dead_lettered';
      reason: string;
      reopened: { position: number; name: string }[];
      count: number;
    },
  ): void;
  /** A cancellation was recorded (`CANCEL_REQUESTED`). */
  cancelRequested?(e: ObservedExecution & { reason: string }): void;
  /** A step attempt is about to run (its `STEP_STARTED` is durable). */
  stepStarted?(e: ObservedStep): void;
  /** A step attempt ended. */
  stepSettled?(e: ObservedStepEnd): void;
  /** A durable timer was scheduled: a sleep, a retry, a signal timeout, a child re-check. */
  timerScheduled?(
    e: ObservedExecution & {
      position: number;
      name: string;
      timerId: string;
      dueAt: number;
      purpose: string;
    },
  ): void;
  /** A timer fired (`TIMER_FIRED`). */
  timerFired?(e: ObservedExecution & { position: number; timerId: string }): void;
  /** A wait consumed a signal (`SIGNAL_RECEIVED`). */
  signalReceived?(
    e: ObservedExecution & { position: number; name: string; signalId: string; payload?: unknown },
  ): void;
  /** A child's seq 0 is durable and the parent recorded it (`CHILD_STARTED`). */
  childStarted?(
    e: ObservedExecution & { position: number; childId: string; childWorkflow: string; childVersion: number },
  ): void;
  /** The parent saw its child end (`CHILD_SETTLED`). */
  childSettled?(e: ObservedExecution & { position: number; childId: string; status: ExecutionStatus }): void;
}

/** An event as the writer recorded it, before encoding. */
export interface ObservedRecord {
  type: EventType;
  payload: unknown;
  recordedAt: number;
}

type Payload = Record<string, unknown>;

/** The observers of one runtime; see the module comment. */
export class Observers {
  /** Start times of step attempts in flight here, by `executionId#position`. */
  private readonly stepStarts = new Map<string, number>();

  constructor(
    private readonly list: readonly RuntimeObserver[],
    private readonly onError: (error: unknown, context: string) => void,
  ) {}

  /** Events of one execution are durable: tell every observer, in seq order. */
  appended(state: ExecutionState, fence: number, records: readonly ObservedRecord[]): void {
    for (const record of records) {
      const base: ObservedExecution = {
        executionId: state.executionId,
        workflow: state.workflow,
        version: state.version,
        fence,
        at: record.recordedAt,
      };
      this.one(state, base, record);
    }
  }

  /** An execution was dead-lettered (its log is not replayed for this: seq 0 gives what is needed). */
  deadLettered(base: ObservedExecution, startedAt: number, reason: string): void {
    const settled: ObservedSettlement = {
      ...base,
      status: 'dead_lettered',
      startedAt,
      durationMs: base.at - startedAt,
      reason,
      error: { name: 'ExecutionDeadLettered', message: reason },
    };
    this.emit('executionSettled', () => settled);
  }

  /**
   * An operator's resume is durable (`runtime.resume`; its `EXECUTION_REDRIVEN` is written by
   * the resume itself, not by a run's writer). `state` is the log folded through it.
   */
  redriven(
    state: ExecutionState,
    resumed: {
      fence: number;
      from: 'failed' | 'dead_lettered';
      reopened: readonly { position: number; name: string }[];
    },
  ): void {
    this.emit('executionRedriven', () => ({
      executionId: state.executionId,
      workflow: state.workflow,
      version: state.version,
      fence: resumed.fence,
      at: state.redriven?.at ?? state.updatedAt,
      from: resumed.from,
      reason: state.redriven?.reason ?? '',
      reopened: resumed.reopened.map(({ position, name }) => ({ position, name })),
      count: state.redriven?.count ?? 1,
    }));
  }

  private one(state: ExecutionState, base: ObservedExecution, record: ObservedRecord): undefined {
    const p = (record.payload ?? {}) as Payload;
    switch (record.type) {
      case 'EXECUTION_STARTED':
        return this.emit('executionStarted', (o) => ({
          ...base,
          ...(typeof p.parentId === 'string' ? { parentId: p.parentId } : {}),
          ...(o.payloads === true ? { input: p.input } : {}),
        }));
      case 'EXECUTION_RECOVERED':
        return this.emit(p.claimed === true ? 'executionClaimed' : 'executionRecovered', () => ({
          ...base,
          reason: String(p.reason),
        }));
      case 'EXECUTION_RESUMED':
        return this.emit('executionResumed', () => ({ ...base, reason: String(p.reason) }));
      case 'CANCEL_REQUESTED':
        return this.emit('cancelRequested', () => ({ ...base, reason: String(p.reason) }));
      case 'EXECUTION_SUSPENDED':
        return this.emit('executionSuspended', () => ({
          ...base,
          reason: String(p.reason),
          ...(typeof p.wakeAt === 'number' ? { wakeAt: p.wakeAt } : {}),
          signals: Array.isArray(p.signals) ? (p.signals as string[]) : [],
          children: Array.isArray(p.children) ? (p.children as string[]) : [],
        }));
      case 'EXECUTION_COMPLETED':
      case 'EXECUTION_FAILED':
      case 'EXECUTION_CANCELLED':
      case 'EXECUTION_CONTINUED':
        return this.settled(state, base, record.type, p);
      case 'STEP_STARTED': {
        this.stepStarts.set(`${base.executionId}#${String(p.position)}`, record.recordedAt);
        return this.emit('stepStarted', () => this.step(base, p));
      }
      case 'STEP_COMPLETED':
        if (p.kind !== 'step') return undefined;
        return this.stepEnd(base, p, 'completed');
      case 'STEP_FAILED':
        return this.stepEnd(base, p, typeof p.retryAt === 'number' ? 'retrying' : 'failed');
      case 'TIMER_SCHEDULED':
        return this.emit('timerScheduled', () => ({
          ...base,
          position: Number(p.position),
          name: String(p.name),
          timerId: String(p.timerId),
          dueAt: Number(p.dueAt),
          purpose: String(p.purpose),
        }));
      case 'TIMER_FIRED':
        return this.emit('timerFired', () => ({
          ...base,
          position: Number(p.position),
          timerId: String(p.timerId),
        }));
      case 'SIGNAL_RECEIVED':
        return this.emit('signalReceived', (o) => ({
          ...base,
          position: Number(p.position),
          name: String(p.name),
          signalId: String(p.signalId),
          ...(o.payloads === true ? { payload: p.payload } : {}),
        }));
      case 'CHILD_STARTED':
        return this.emit('childStarted', () => ({
          ...base,
          position: Number(p.position),
          childId: String(p.childId),
          childWorkflow: String(p.name),
          childVersion: Number(p.version),
        }));
      case 'CHILD_SETTLED':
        return this.emit('childSettled', () => ({
          ...base,
          position: Number(p.position),
          childId: String(p.childId),
          status: p.status as ExecutionStatus,
        }));
      default:
        return undefined;
    }
  }

  private step(base: ObservedExecution, p: Payload): ObservedStep {
    return { ...base, position: Number(p.position), name: String(p.name), attempt: Number(p.attempt ?? 1) };
  }

  private stepEnd(base: ObservedExecution, p: Payload, outcome: ObservedStepEnd['outcome']): undefined {
    const key = `${base.executionId}#${String(p.position)}`;
    const startedAt = this.stepStarts.get(key);
    this.stepStarts.delete(key);
    return this.emit('stepSettled', (o) => ({
      ...this.step(base, p),
      outcome,
      ...(startedAt === undefined ? {} : { startedAt, durationMs: base.at - startedAt }),
      ...(p.error === undefined ? {} : { error: observedError(p.error) }),
      ...(typeof p.retryAt === 'number' ? { retryAt: p.retryAt } : {}),
      ...(o.payloads === true && outcome === 'completed' ? { output: p.output } : {}),
    }));
  }

  private settled(state: ExecutionState, base: ObservedExecution, type: EventType, p: Payload): undefined {
    const status = SETTLED_STATUS[type as keyof typeof SETTLED_STATUS] ?? 'cancelled';
    // A terminal event ends the execution: forget any step start it left behind.
    for (const key of this.stepStarts.keys())
      if (key.startsWith(`${base.executionId}#`)) this.stepStarts.delete(key);
    this.emit('executionSettled', (o) => ({
      ...base,
      status,
      startedAt: state.startedAt,
      durationMs: base.at - state.startedAt,
      ...(p.error === undefined ? {} : { error: observedError(p.error) }),
      ...(typeof p.reason === 'string' ? { reason: p.reason } : {}),
      ...(state.parentId === undefined ? {} : { parentId: state.parentId }),
      ...(state.redriven === undefined
        ? {}
        : { redriven: { count: state.redriven.count, at: state.redriven.at } }),
      ...(o.payloads === true && status === 'completed' ? { output: p.output } : {}),
    }));
  }

  /** Call `method` on every observer that has it; a throw or a rejection goes to `onError`. */
  private emit<K extends keyof RuntimeObserver>(
    method: K,
    event: (
      observer: RuntimeObserver,
    ) => Parameters<NonNullable<Extract<RuntimeObserver[K], (...args: never[]) => void>>>[0],
  ): undefined {
    for (const observer of this.list) {
      const fn = observer[method];
      if (typeof fn !== 'function') continue;
      try {
        const returned = (fn as (e: unknown) => unknown).call(observer, event(observer));
        if (returned instanceof Promise)
          returned.catch((error: unknown) => this.onError(error, `observer ${method}`));
      } catch (error) {
        this.onError(error, `observer ${method}`);
      }
    }
    return undefined;
  }
}

function observedError(error: unknown): ObservedError {
  if (error instanceof Error) return { name: error.name, message: error.message };
  if (error !== null && typeof error === 'object') {
    const e = error as { name?: unknown; message?: unknown };
    return { name: typeof e.name === 'string' ? e.name : 'Error', message: String(e.message ?? '') };
  }
  return { name: 'Error', message: String(error) };
}
