/**
 * Waiting: what a blocked call waits for (a wake-up time with its durable timer, a signal, a
 * child), and suspending a run once every branch waits: its timers made durable first, then
 * one `EXECUTION_SUSPENDED` that says what it waits for.
 */

import type { RunHost, RunOutcome } from './execution-run.js';
import type { LogWriter } from './log-writer.js';
import type { Awaiting } from './run-internals.js';
import type { Timer } from './spi.js';

/** One blocked call: when it wakes (with the timer that wakes it), or the signal or child it waits for. */
export interface Wait {
  wakeAt?: number;
  timer?: Timer;
  signal?: string;
  child?: string;
}

/** The wait of a call blocked until `wakeAt` (by durable timer `timerId`) and/or on `awaiting`. */
export function waitOf(
  executionId: string,
  wakeAt: number | undefined,
  timerId: string | undefined,
  awaiting?: Awaiting,
): Wait {
  return {
    ...(wakeAt === undefined ? {} : { wakeAt }),
    ...(timerId === undefined || wakeAt === undefined
      ? {}
      : { timer: { timerId, executionId, dueAt: wakeAt } }),
    ...awaiting,
  };
}

/** Suspend the run on `waits`: their timers first, then `EXECUTION_SUSPENDED`, durable. */
export async function suspend(
  host: Pick<RunHost, 'scheduleTimers'>,
  writer: LogWriter,
  waits: readonly Wait[],
): Promise<RunOutcome> {
  const timers = waits.flatMap((wait) => (wait.timer === undefined ? [] : [wait.timer]));
  await host.scheduleTimers(timers);
  const dues = waits.flatMap((wait) => (wait.wakeAt === undefined ? [] : [wait.wakeAt]));
  const wakeAt = dues.length === 0 ? undefined : Math.min(...dues);
  const signals = waits.flatMap((wait) => (wait.signal === undefined ? [] : [wait.signal]));
  const children = waits.flatMap((wait) => (wait.child === undefined ? [] : [wait.child]));
  if (signals.length === 0 && children.length === 0) {
    const state = writer.record(
      'EXECUTION_SUSPENDED',
      { reason: 'waiting for a timer', wakeAt },
      'suspension',
    );
    await writer.flush();
    return { kind: 'suspended', state, wakeAt };
  }
  const awaiting = { signals: [...new Set(signals)], children: [...new Set(children)] };
  const reason = signals.length > 0 ? 'waiting for a signal' : 'waiting for a child';
  const payload = { reason, ...(wakeAt === undefined ? {} : { wakeAt }), ...awaiting };
  const state = writer.record('EXECUTION_SUSPENDED', payload, 'suspension');
  await writer.flush();
  return { kind: 'suspended', state, wakeAt, awaiting };
}
