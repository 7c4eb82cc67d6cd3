/**
 * The signatures seen within the clock-skew window, so a replayed request is refused. Bounded:
 * when full of live entries it refuses new ones (fails closed) rather than forget a live one,
 * which would reopen the replay window.
 */

/** What {@link ReplayCache.admit} decided. */
export type Admission = 'fresh' | 'replayed' | 'full';

export class ReplayCache {
  // Insertion order is expiry order within a bounded skew, so the oldest entries come first.
  private readonly seen = new Map<string, number>();

  constructor(private readonly maxEntries: number) {}

  /**
   * Record `signature` until `expiresAt` (ms since the epoch) unless it was seen before.
   * Entries expired at `now` are dropped first.
   */
  admit(signature: string, expiresAt: number, now: number): Admission {
    this.prune(now);
    if (this.seen.has(signature)) return 'replayed';
    if (this.seen.size >= this.maxEntries) return 'full';
    this.seen.set(signature, expiresAt);
    return 'fresh';
  }

  /** Entries currently held. */
  get size(): number {
    return this.seen.size;
  }

  private prune(now: number): void {
    for (const [signature, expiresAt] of this.seen) {
      if (expiresAt > now) {
        // Entries are only roughly ordered (timestamps vary within the skew); stop at the first
        // live one and let a full cache sweep everything.
        if (this.seen.size < this.maxEntries) return;
        continue;
      }
      this.seen.delete(signature);
    }
  }
}
