/** {@link ScheduleStore} in memory. */
import type { ScheduleState, ScheduleStore } from '../schedules/schedule-spi.js';

/** Schedule state in a map; each save compares and writes in one turn. */
export class MemoryScheduleStore implements ScheduleStore {
  private readonly rows = new Map<string, ScheduleState>();

  async get(name: string): Promise<ScheduleState | null> {
    const row = this.rows.get(name);
    return row === undefined ? null : { ...row };
  }

  async save(expected: number | null, state: ScheduleState): Promise<boolean> {
    const current = this.rows.get(state.name);
    if ((current?.revision ?? null) !== expected) return false;
    this.rows.set(state.name, { ...state });
    return true;
  }
}
