/**
 * `ctx.waitForSignal`: consume the oldest signal of a name from the inbox at this call's
 * position, recording `SIGNAL_RECEIVED` (so replay returns the same payload by position), or
 * block until one arrives, with a durable timeout timer when `timeoutMs` is given.
 */

import type { WaitForSignalOptions } from './context-api.js';
import { UnknownSignalError } from './errors.js';
import type { SignalReceivedPayload } from './events.js';
import { newId } from './ids.js';
import { featuresOf, type RunInternals } from './run-features.js';
import type { Signal } from './spi.js';
import { parseWith, type Schema } from './workflow.js';

/** See the module comment; resolves `undefined` when `timeoutMs` passes first. */
export async function waitForSignal<T>(
  run: RunInternals,
  name: string,
  options: WaitForSignalOptions<T>,
): Promise<T | undefined> {
  const schema = schemaOf(run, name, options);
  const { timeoutMs } = options;
  if (timeoutMs !== undefined && (!Number.isFinite(timeoutMs) || timeoutMs < 0))
    throw new RangeError(`ctx.waitForSignal("${name}"): timeoutMs must be >= 0, got ${timeoutMs}`);
  const { position, record } = run.next('signal', name);
  const where = `signal "${name}" of execution "${run.executionId}"`;
  if (record?.status === 'completed') return parseWith(schema, record.output, where, 'payload');
  if (record?.status === 'fired') return undefined;
  const inbox = await run.track(() => featuresOf(run, 'ctx.waitForSignal').signals.pending(run.executionId));
  const signal = oldestUnconsumed(run, inbox, name);
  if (signal !== undefined) {
    const payload = run.writer.codec.decode(signal.payload);
    const received: SignalReceivedPayload = { position, name, signalId: signal.signalId, payload };
    const timeoutTimer = record?.timerId;
    run.writer.record('SIGNAL_RECEIVED', received, where);
    run.consumedSignals.push(signal.signalId);
    // The timeout timer no longer wakes anything (the fold dropped it): delete its row after the run.
    if (timeoutTimer !== undefined) run.discardTimer(timeoutTimer);
    return parseWith(schema, payload, where, 'payload');
  }
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
  if (options.schema !== undefined) return options.schema;
  const declared = run.workflow.signals?.[name];
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

/** The first signal of `name` in inbox order whose id the log has not consumed. */
function oldestUnconsumed(run: RunInternals, inbox: readonly Signal[], name: string): Signal | undefined {
  const consumed = new Set(run.state().consumedSignals ?? []);
  return inbox.find((signal) => signal.name === name && !consumed.has(signal.signalId));
}
