/**
 * The run's side of updates (adr/0049). `ctx.onUpdate(name, handler)` registers a handler; it
 * records nothing and takes no position. An update is applied only when every branch of the
 * body waits (the point where the run would suspend): live, the oldest update in the inbox
 * that has a handler is taken, the handler runs with its payload, and `UPDATE_APPLIED`
 * records the payload with the handler's result at the next position; on replay, the run
 * reaches the same quiet point (outcomes are handed over in log order, adr/0031), finds that
 * record at the position it would take next, and calls the handler again with the recorded
 * payload, so the body's variables end as they did the first time.
 */

import {
  InvalidInputError,
  NonDeterminismError,
  PayloadTooLargeError,
  SerializationError,
  UnknownUpdateError,
} from './errors.js';
import type { UpdateAppliedPayload } from './events.js';
import type { CallRecord } from './fold.js';
import { assertName } from './ids.js';
import { recordableError, shrunkError } from './recordable-error.js';
import { featuresOf, type RunInternals } from './run-internals.js';
import type { Signal } from './spi.js';
import { UPDATE_PREFIX, updateInboxName } from './update-inbox.js';
import { declaredUpdate, parseWith, type Schema } from './workflow.js';

/** Updates a run reads from the inbox per query: it applies one at a time. */
const PAGE = 1;

type Handler = (payload: unknown) => unknown;

/** The update handlers of one run, and applying updates to it; see the module comment. */
export class UpdateHandlers {
  private readonly handlers = new Map<string, { handler: Handler; schema: Schema }>();
  /** The inbox id of the last update this run read (it pages on from there). */
  private after: string | undefined;
  private applying = false;

  constructor(private readonly run: RunInternals) {}

  /** `ctx.onUpdate`: checked at the call (a declared name, a function). */
  register(name: string, handler: unknown): void {
    assertName(name, 'ctx.onUpdate call', 'name');
    const { workflow, executionId } = this.run;
    const schema = declaredUpdate(workflow, name);
    if (schema === undefined)
      throw new UnknownUpdateError(executionId, workflow.name, name, Object.keys(workflow.updates ?? {}));
    if (typeof handler !== 'function')
      throw new InvalidInputError(`ctx.onUpdate("${name}") call`, [
        { path: 'handler', message: `must be a function, got ${typeof handler}` },
      ]);
    this.handlers.set(name, { handler: handler as Handler, schema });
    // Page from the oldest again: an update of this name may have been sent before those read.
    this.after = undefined;
  }

  /**
   * A resident run resumes (adr/0068): page the inbox from the oldest again, since an update
   * sent meanwhile may have an id before the last one read.
   */
  resumed(): void {
    this.after = undefined;
  }

  /** True while a handler runs: a context call then is refused (handlers make none). */
  get inHandler(): boolean {
    return this.applying;
  }

  /** True when the body registered any handler (only then does a quiet run read the inbox). */
  get any(): boolean {
    return this.handlers.size > 0;
  }

  /** The inbox names a suspended run waits on for its handlers (a sender wakes it). */
  inboxNames(): string[] {
    return [...this.handlers.keys()].map(updateInboxName);
  }

  /**
   * Replay: the log's record at the position the run would take next is an update; apply it
   * from the log. Throws `NonDeterminismError` when the body has no handler for it.
   */
  replay(record: CallRecord): void {
    const { position, record: taken } = this.run.next('update', record.name);
    const entry = this.handlers.get(record.name);
    if (entry === undefined || taken === undefined) {
      throw new NonDeterminismError(this.run.executionId, position, record, {
        kind: 'update',
        name: `no ctx.onUpdate("${record.name}") handler`,
      });
    }
    // The handler's result is the recorded one; it runs again for what it does to the body.
    this.call(entry, taken.payload);
  }

  /**
   * Live: apply the oldest update in the inbox that has a handler and the log has not
   * applied. Resolves false when there is none.
   */
  async applyNext(): Promise<boolean> {
    if (this.handlers.size === 0 || this.run.state().cancel !== undefined) return false;
    const signal = await this.run.track(() => this.oldestPending());
    if (signal === undefined) return false;
    const name = signal.name.slice(UPDATE_PREFIX.length);
    const updateId = signal.signalId.slice(UPDATE_PREFIX.length);
    const entry = this.handlers.get(name);
    if (entry === undefined) return false;
    const payload = this.run.writer.codec.decode(signal.payload);
    const { position } = this.run.next('update', name);
    const outcome = this.call(entry, payload);
    const base = { position, name, updateId, payload };
    this.record(name, base, outcome);
    this.run.consumedSignals.push(signal.signalId);
    return true;
  }

  /** Run a handler with `payload` parsed by its schema; what it returned, or what it threw. */
  private call(
    entry: { handler: Handler; schema: Schema },
    payload: unknown,
  ): { result: unknown } | { error: unknown } {
    this.applying = true;
    try {
      const parsed = parseWith(
        entry.schema,
        payload,
        `update of execution "${this.run.executionId}"`,
        'payload',
      );
      const result = entry.handler(parsed);
      if (isThenable(result)) {
        // The promise is dropped: its settling (or rejecting) is no part of the update.
        (result as Promise<unknown>).then(undefined, () => {});
        return { error: new TypeError('an update handler must return synchronously; it returned a promise') };
      }
      return { result };
    } catch (error) {
      return { error };
    } finally {
      this.applying = false;
    }
  }

  /** Record `UPDATE_APPLIED`; a result the log cannot hold fails the update instead. */
  private record(
    name: string,
    base: Omit<UpdateAppliedPayload, 'result' | 'error'>,
    outcome: { result: unknown } | { error: unknown },
  ): void {
    const where = `update "${name}" of execution "${this.run.executionId}"`;
    if ('result' in outcome) {
      try {
        this.run.writer.record('UPDATE_APPLIED', { ...base, result: outcome.result }, where);
        return;
      } catch (refused) {
        if (!(refused instanceof SerializationError || refused instanceof PayloadTooLargeError))
          throw refused;
        outcome = { error: refused };
      }
    }
    const error = recordableError(outcome.error);
    try {
      this.run.writer.record('UPDATE_APPLIED', { ...base, error }, where);
    } catch (refused) {
      if (!(refused instanceof PayloadTooLargeError)) throw refused;
      this.run.writer.record(
        'UPDATE_APPLIED',
        { ...base, error: shrunkError(error, refused.limit / 2) },
        where,
      );
    }
  }

  /** The oldest update in the inbox of a name with a handler that the log has not applied. */
  private async oldestPending(): Promise<Signal | undefined> {
    const { signals } = featuresOf(this.run, 'ctx.onUpdate');
    const names = this.inboxNames();
    for (;;) {
      const query =
        this.after === undefined ? { names, limit: PAGE } : { names, after: this.after, limit: PAGE };
      const page = await signals.pending(this.run.executionId, query);
      for (const signal of page) {
        this.after = signal.signalId;
        if (!this.run.isConsumed(signal.signalId)) return signal;
      }
      if (page.length < PAGE) return undefined;
    }
  }
}

function isThenable(value: unknown): boolean {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}
