/**
 * `ctx.waitForSignal`: consume the oldest signal of a name from the inbox at this call's
 * position, recording `SIGNAL_RECEIVED` (so replay returns the same payload by position), or
 * block until one arrives, with a durable timeout timer when `timeoutMs` is given.
 *
 * A wait reads the inbox one signal at a time, by name, oldest first: what it costs does not
 * grow with signals of other names, nor with the inbox's size (adr/0025). Within a run, a
 * cursor per name starts each read after the last signal of that name the run consumed, so a
 * loop consuming many signals reads each once.
 */

import type { WaitForSignalOptions } from './context-api.js';
import { optionalDurationMs } from './durations.js';
import { UnknownSignalError } from './errors.js';
import type { SignalReceivedPayload } from './events.js';
import { newId } from './ids.js';
import { featuresOf, type RunInternals } from './run-internals.js';
import type { Signal, SignalStore } from './spi.js';
import { refuseReserved } from './update-inbox.js';
import { declaredSignal, parseWith, type Schema } from './workflow.js';

/** Signals a wait reads per query: it needs one, and payloads may be large. */
const PAGE = 1;

/**
 * Per run (its log writer, one per attempt: `RunInternals` objects are made per call) and
 * signal name: the id of the last signal of that name the run consumed or passed.
 */
const cursors = new WeakMap<object, Map<string, string>>();

/** See the module comment; resolves `undefined` when `timeoutMs` passes first. */
export async function waitForSignal<T>(
  run: RunInternals,
  name: string,
  options: WaitForSignalOptions<T>,
): Promise<T | undefined> {
  const schema = schemaOf(run, name, options);
  const timeoutMs = optionalDurationMs(
    options.timeoutMs,
    `ctx.waitForSignal("${name}") options`,
    'timeoutMs',
  );
  const { position, record } = run.next('signal', name);
  const where = `signal "${name}" of execution "${run.executionId}"`;
  if (record?.status === 'completed') return parseWith(schema, record.output, where, 'payload');
  if (record?.status === 'fired') return undefined;
  let taken: T | undefined;
  const found = await takeOldest(run, name, (signal) => {
    const payload = run.writer.codec.decode(signal.payload);
    const received: SignalReceivedPayload = { position, name, signalId: signal.signalId, payload };
    const timeoutTimer = record?.timerId;
    run.writer.record('SIGNAL_RECEIVED', received, where);
    run.consumedSignals.push(signal.signalId);
    // The timeout timer no longer wakes anything (the fold dropped it): delete its row after the run.
    if (timeoutTimer !== undefined) run.discardTimer(timeoutTimer);
    taken = parseWith(schema, payload, where, 'payload');
  });
  if (found) return taken;
  if (timeoutMs === undefined) return run.block(undefined, undefined, { signal: name });
  let timerId = record?.timerId;
  let dueAt = record?.wakeAt;
  if (timerId === undefined || dueAt === undefined) {
    timerId = newId();
    dueAt = run.host.clock() + timeoutMs;
    run.writer.record(
      'TIMER_SCHEDULED',
      { position, name, timerId, dueAt, purpose: 'signal' },
      `timeout of ${where}`,
    );
  }
  if (dueAt > run.host.clock()) return run.block(dueAt, timerId, { signal: name });
  run.fireTimer(timerId, position);
  return undefined;
}

function schemaOf<T>(run: RunInternals, name: string, options: WaitForSignalOptions<T>): Schema<T> {
  refuseReserved(name, `ctx.waitForSignal("${name}") call`, 'name');
  if (options.schema !== undefined) return options.schema;
  const declared = declaredSignal(run.workflow, name);
  if (declared === undefined) {
    throw new UnknownSignalError(
      run.executionId,
      run.workflow.name,
      name,
      Object.keys(run.workflow.signals ?? {}),
    );
  }
  return declared as Schema<T>;
}

/**
 * Find the oldest signal of `name` whose id the log has not consumed and hand it to `take`,
 * in the same synchronous step as the check (so two waits of one run never take the same
 * signal). Resolves false when the inbox has none. Signals the log consumed (this run's, whose
 * rows are completed after the run, or a crashed run's) are paged past.
 */
async function takeOldest(run: RunInternals, name: string, take: (signal: Signal) => void): Promise<boolean> {
  const { signals } = featuresOf(run, 'ctx.waitForSignal');
  // Signals seq 0 carries (signalWithStart) are older than any in the inbox.
  const state = run.state();
  const carried = state.startSignals?.find(
    (signal) => signal.name === name && !run.isConsumed(signal.signalId),
  );
  if (carried !== undefined) {
    take({ ...carried, executionId: run.executionId });
    return true;
  }
  let seen = cursors.get(run.writer);
  if (seen === undefined) {
    seen = new Map();
    cursors.set(run.writer, seen);
  }
  for (;;) {
    const after = seen.get(name);
    const query =
      after === undefined ? { names: [name], limit: PAGE } : { names: [name], after, limit: PAGE };
    const page = await run.track(() => signals.pending(run.executionId, query));
    for (const signal of page) {
      seen.set(name, signal.signalId);
      if (!run.isConsumed(signal.signalId)) {
        take(signal);
        return true;
      }
    }
    if (page.length < PAGE) return false;
  }
}

/**
 * True when the inbox holds a signal of one of `names` whose id is not in `consumed`. Reads one
 * signal at a time, so its memory does not grow with the inbox, nor with how many names.
 */
export async function hasUnconsumed(
  signals: SignalStore,
  executionId: string,
  names: readonly string[],
  consumed: readonly string[] | undefined,
): Promise<boolean> {
  let after: string | undefined;
  for (;;) {
    const query = after === undefined ? { names, limit: PAGE } : { names, after, limit: PAGE };
    const page = await signals.pending(executionId, query);
    for (const signal of page) {
      if (!consumedBy(consumed, signal.signalId)) return true;
      after = signal.signalId;
    }
    if (page.length < PAGE) return false;
  }
}

function consumedBy(consumed: readonly string[] | undefined, signalId: string): boolean {
  return consumed?.includes(signalId) === true;
}
