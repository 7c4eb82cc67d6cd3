/**
 * `faultyStore`: wraps a set of stores and injects one fault at a chosen write, a failure
 * (`throw`) or a simulated process crash (`crash-before`, `crash-after`). After a crash the
 * wrapper is dead: every later call rejects with `SimulatedCrashError`, so the runtime attempt
 * using it dies too, while the inner stores stay intact for a fresh runtime to recover from.
 */
import type { Stores } from '@skein/workflow-runtime';
import { parseWith } from '@skein/workflow-runtime/internal';
import { z } from 'zod';
import { InjectedFaultError, SimulatedCrashError } from './errors.js';
import { type Guard, wrapEvents, wrapLeases, wrapSnapshots, wrapTimers } from './wrap-stores.js';

/** Every store operation that writes; reads are never faulted (but do fail after a crash). */
export const WriteOps = [
  'events.append',
  'events.acquireFence',
  'events.takeOverPending',
  'snapshots.put',
  'snapshots.delete',
  'timers.schedule',
  'timers.claimDue',
  'timers.claim',
  'timers.complete',
  'leases.claim',
  'leases.renew',
  'leases.release',
  'leases.claimMany',
  'leases.releaseMany',
] as const;

/** One of {@link WriteOps}. */
export type WriteOp = (typeof WriteOps)[number];

/** A write made through a faulty wrapper. */
export interface WriteInfo {
  /** 0-based, in the order the calls were made. */
  index: number;
  op: WriteOp;
  /** The arguments of the call, as the runtime passed them. */
  args: readonly unknown[];
}

/** What to inject: `throw` fails the write (not applied); a crash kills the wrapper. */
export type FaultKind = 'throw' | 'crash-before' | 'crash-after';

/** Which write to fault and how. The plan fires once, at the first write it matches. */
export interface FaultPlan {
  /** The write's index, or a predicate over it. */
  at: number | ((write: WriteInfo) => boolean);
  /** `throw`: the write fails and is not applied, later calls go on; `crash-before`: not applied, then dead; `crash-after`: applied, then dead. */
  fault: FaultKind;
  /** The error a `throw` fault rejects with (default: an `InjectedFaultError` naming the write). */
  error?: (write: WriteInfo) => unknown;
}

/** Stores with a fault plan, and what happened through them. */
export interface FaultyStores extends Stores {
  /** Every write attempted through this wrapper, in call order (including the faulted one). */
  readonly writes: readonly WriteInfo[];
  /** The write the plan hit, once it has. */
  readonly faulted: WriteInfo | undefined;
  /** The crash, once the plan crashed the wrapper. */
  readonly crash: SimulatedCrashError | undefined;
}

const isFunction = (value: unknown) => typeof value === 'function';
const planSchema = z.object({
  at: z.union([
    z.number().int().nonnegative(),
    z.custom<(write: WriteInfo) => boolean>(isFunction, 'expected a function'),
  ]),
  fault: z.enum(['throw', 'crash-before', 'crash-after']),
  error: z.custom<(write: WriteInfo) => unknown>(isFunction, 'expected a function').optional(),
});

/** Counts writes, fires the plan once, and refuses everything after a crash. */
class FaultState implements Guard {
  readonly writes: WriteInfo[] = [];
  faulted: WriteInfo | undefined;
  crash: SimulatedCrashError | undefined;

  constructor(private readonly plan: FaultPlan | undefined) {}

  async write<T>(op: WriteOp, args: readonly unknown[], apply: () => Promise<T>): Promise<T> {
    this.assertAlive(op);
    const write: WriteInfo = { index: this.writes.length, op, args };
    this.writes.push(write);
    const fault = this.faultFor(write);
    if (fault === 'throw') throw this.plan?.error?.(write) ?? new InjectedFaultError(write);
    if (fault === 'crash-before') throw this.die(write, 'before', op);
    let result: T;
    try {
      result = await apply();
    } catch (error) {
      // The process dies once the store answered, whatever it answered (a refused start too).
      if (fault === 'crash-after') throw this.die(write, 'after', op);
      throw error;
    }
    if (fault === 'crash-after') throw this.die(write, 'after', op);
    // A crash while this write was in flight: it may have landed, but nobody hears of it.
    this.assertAlive(op);
    return result;
  }

  async read<T>(op: string, apply: () => Promise<T>): Promise<T> {
    this.assertAlive(op);
    const result = await apply();
    this.assertAlive(op);
    return result;
  }

  private faultFor(write: WriteInfo): FaultKind | undefined {
    if (this.plan === undefined || this.faulted !== undefined) return undefined;
    const { at } = this.plan;
    if (typeof at === 'number' ? at !== write.index : !at(write)) return undefined;
    this.faulted = write;
    return this.plan.fault;
  }

  private die(write: WriteInfo, when: 'before' | 'after', call: string): SimulatedCrashError {
    this.crash = new SimulatedCrashError({ index: write.index, op: write.op }, when, call);
    return this.crash;
  }

  private assertAlive(call: string): void {
    if (this.crash !== undefined) {
      const { write, when } = this.crash;
      throw new SimulatedCrashError(write, when, call);
    }
  }
}

/**
 * Wrap `inner` so that the write `plan` names fails or crashes (default: no fault; the
 * wrapper only counts writes). `close()` on the wrapper leaves `inner` open: the inner
 * stores are the caller's, kept intact for recovery.
 * @example
 * const inner = openMemoryStores();
 * const stores = faultyStore(inner, { at: 3, fault: 'crash-after' });
 * await expect(createRuntime({ stores, workflows: [wf] }).execute(request)).rejects.toThrow(SimulatedCrashError);
 * await createRuntime({ stores: inner, workflows: [wf] }).execute(request); // recovers
 */
export function faultyStore(inner: Stores, plan?: FaultPlan): FaultyStores {
  const checked =
    plan === undefined ? undefined : (parseWith(planSchema, plan, 'fault plan', 'plan') as FaultPlan);
  const state = new FaultState(checked);
  return {
    events: wrapEvents(inner.events, state),
    snapshots: wrapSnapshots(inner.snapshots, state),
    timers: wrapTimers(inner.timers, state),
    leases: wrapLeases(inner.leases, state),
    // The signal inbox is no log write: it passes through unfaulted, as do the optional stores.
    signals: inner.signals,
    ...optionalStoresOf(inner),
    close() {},
    get writes() {
      return state.writes;
    },
    get faulted() {
      return state.faulted;
    },
    get crash() {
      return state.crash;
    },
  };
}

/**
 * The optional members of `inner` (queues, schedules, outbox, blockages, fan-out tables, the
 * close hooks), passed through as they are: present on the wrapper exactly when `inner` has them.
 */
function optionalStoresOf(inner: Stores): Partial<Stores> {
  const passed: Partial<Stores> = {};
  if (inner.queues !== undefined) passed.queues = inner.queues;
  if (inner.schedules !== undefined) passed.schedules = inner.schedules;
  if (inner.outbox !== undefined) passed.outbox = inner.outbox;
  if (inner.blockages !== undefined) passed.blockages = inner.blockages;
  if (inner.fanOuts !== undefined) passed.fanOuts = inner.fanOuts;
  const beforeClose = inner.beforeClose?.bind(inner);
  if (beforeClose !== undefined) passed.beforeClose = beforeClose;
  return passed;
}
