/**
 * Which signal ids a run's log consumed, as a set that grows with the log instead of a scan of
 * `state.consumedSignals` per lookup. A run's state only ever gains consumed ids at the end
 * (the fold appends them; a resident run's next state is a fork of its last one, adr/0068), so
 * the set takes in only the ids past the ones it holds: a lookup costs O(1) plus the ids
 * consumed since the last one, not O(ids consumed). Should the array ever not extend what the
 * set took in, it is rebuilt from it.
 */
export class ConsumedIndex {
  private readonly ids = new Set<string>();
  /** How many leading ids of the array last looked at the set holds. */
  private taken = 0;
  /** The last of them (to see that a later array extends the same list). */
  private last: string | undefined;

  /** True when `consumed` (a state's `consumedSignals`) holds `signalId`. */
  has(consumed: readonly string[] | undefined, signalId: string): boolean {
    if (consumed === undefined || consumed.length === 0) return false;
    if (consumed.length < this.taken || (this.taken > 0 && consumed[this.taken - 1] !== this.last)) {
      this.ids.clear();
      this.taken = 0;
    }
    for (let i = this.taken; i < consumed.length; i++) this.ids.add(consumed[i]!);
    this.taken = consumed.length;
    this.last = consumed[consumed.length - 1];
    return this.ids.has(signalId);
  }
}
