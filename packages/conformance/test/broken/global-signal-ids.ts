/**
 * A deliberately broken signal store: a signal id is unique across every execution, as the
 * inbox once was (issue 15.3). A signal whose id another execution's inbox holds is dropped as
 * a duplicate. The conformance suites must reject it.
 */
import { MemorySignalStore, type Signal, type SignalSendOutcome } from '@skein/workflow-runtime/spi';

/** The memory store, except that an id taken by any execution counts as taken. */
export class GlobalSignalIdStore extends MemorySignalStore {
  private readonly owners = new Map<string, string>();

  override async send(signal: Signal, options?: { maxPending?: number }): Promise<SignalSendOutcome> {
    const owner = this.owners.get(signal.signalId);
    if (owner !== undefined && owner !== signal.executionId) return 'duplicate';
    const outcome = await super.send(signal, options);
    if (outcome === 'sent') this.owners.set(signal.signalId, signal.executionId);
    return outcome;
  }

  override async clear(executionId: string): Promise<void> {
    for (const [signalId, owner] of this.owners) if (owner === executionId) this.owners.delete(signalId);
    await super.clear(executionId);
  }
}
