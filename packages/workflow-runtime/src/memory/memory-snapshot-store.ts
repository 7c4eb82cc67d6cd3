/** In-memory {@link SnapshotStore}. */
import type { Snapshot, SnapshotStore } from '../spi.js';

/** Keeps the newest snapshot of each execution in memory. */
export class MemorySnapshotStore implements SnapshotStore {
  private readonly snapshots = new Map<string, Snapshot>();

  async put(snapshot: Snapshot): Promise<void> {
    const existing = this.snapshots.get(snapshot.executionId);
    if (existing === undefined || existing.seq <= snapshot.seq)
      this.snapshots.set(snapshot.executionId, { ...snapshot });
  }

  async latest(executionId: string): Promise<Snapshot | null> {
    const snapshot = this.snapshots.get(executionId);
    return snapshot === undefined ? null : { ...snapshot };
  }

  async delete(executionId: string): Promise<void> {
    this.snapshots.delete(executionId);
  }
}
