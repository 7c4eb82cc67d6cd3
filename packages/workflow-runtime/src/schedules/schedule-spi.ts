/**
 * The schedule store SPI: one row of durable state per schedule (docs/schedules.md), written
 * compare-and-set on its `revision`, so of nodes that move a schedule at once exactly one does.
 */

/** Where a schedule stands. */
export interface ScheduleState {
  name: string;
  /** The next due time not yet handled, milliseconds since the epoch. */
  nextDueAt: number;
  paused: boolean;
  /** Bumped by every write; `save` compares it. */
  revision: number;
  /** The execution of the due time fired last. */
  lastExecutionId?: string;
  /** A due time held back by `overlap: 'buffer-one'` until the last execution finishes. */
  bufferedDueAt?: number;
}

/** Schedule state rows. */
export interface ScheduleStore {
  /** The state of one schedule, or null before its first save. */
  get(name: string): Promise<ScheduleState | null>;
  /**
   * Write `state` if the stored row still has revision `expected` (null: no row yet); true when
   * written. `state.revision` is stored as given.
   */
  save(expected: number | null, state: ScheduleState): Promise<boolean>;
}
