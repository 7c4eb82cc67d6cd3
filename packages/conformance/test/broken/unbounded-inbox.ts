/**
 * Deliberately broken signal stores and the inbox bound (issue 25.4): one ignores `maxPending`;
 * the other checks it and inserts in two steps, so concurrent senders all pass the check. The
 * conformance suites must reject both.
 */
import {
  MemorySignalStore,
  maxPendingOf,
  type SendSignalOptions,
  type Signal,
  type SignalSendOutcome,
} from '@skein/workflow-runtime/spi';

/** The memory store, except that the inbox has no bound. */
export class UnboundedInboxStore extends MemorySignalStore {
  override send(signal: Signal): Promise<SignalSendOutcome> {
    return super.send(signal, { maxPending: Number.MAX_SAFE_INTEGER });
  }
}

/** The memory store, except that the bound is checked, then (a turn later) the signal inserted. */
export class RacyBoundInboxStore extends MemorySignalStore {
  override async send(signal: Signal, options?: SendSignalOptions): Promise<SignalSendOutcome> {
    const maxPending = maxPendingOf(options);
    const waiting = await this.pending(signal.executionId, { limit: maxPending });
    await new Promise((resolve) => setImmediate(resolve));
    if (waiting.length >= maxPending && !waiting.some((item) => item.signalId === signal.signalId))
      return 'inbox-full';
    return super.send(signal, { maxPending: Number.MAX_SAFE_INTEGER });
  }
}
