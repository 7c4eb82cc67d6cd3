/** In-memory {@link BlockageStore}. */
import type { Blockage, BlockageFailure, BlockageStore } from '../spi.js';

/** Blockages held in memory, one row per execution. */
export class MemoryBlockageStore implements BlockageStore {
  private readonly rows = new Map<string, Blockage>();

  async record(failure: BlockageFailure): Promise<Blockage> {
    const { executionId, seq, code, message, at } = failure;
    const before = this.rows.get(executionId);
    const again = before !== undefined && before.seq === seq;
    const row: Blockage = {
      executionId,
      seq,
      code,
      message,
      since: again ? before.since : at,
      attempts: again ? before.attempts + 1 : 1,
      lastAt: at,
    };
    this.rows.set(executionId, row);
    return { ...row };
  }

  async get(executionId: string): Promise<Blockage | null> {
    const row = this.rows.get(executionId);
    return row === undefined ? null : { ...row };
  }

  async list(query: { after?: string; limit: number }): Promise<Blockage[]> {
    const after = query.after;
    return [...this.rows.values()]
      .filter((row) => after === undefined || row.executionId > after)
      .sort((a, b) => (a.executionId < b.executionId ? -1 : 1))
      .slice(0, query.limit)
      .map((row) => ({ ...row }));
  }

  async clear(executionId: string): Promise<void> {
    this.rows.delete(executionId);
  }
}
