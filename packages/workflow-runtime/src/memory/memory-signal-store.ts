/** In-memory {@link SignalStore}. */
import type { Signal, SignalStore } from '../spi.js';

/** The signal inbox held in memory, in send order; everything is lost with the process. */
export class MemorySignalStore implements SignalStore {
  /** Insertion order is send order (a Map iterates in insertion order). */
  private readonly signals = new Map<string, Signal>();

  async send(signal: Signal): Promise<void> {
    if (!this.signals.has(signal.signalId)) this.signals.set(signal.signalId, { ...signal });
  }

  async pending(executionId: string): Promise<Signal[]> {
    return [...this.signals.values()]
      .filter((signal) => signal.executionId === executionId)
      .map((signal) => ({ ...signal }));
  }

  async complete(signalId: string): Promise<void> {
    this.signals.delete(signalId);
  }
}
