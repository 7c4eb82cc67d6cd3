/** In-memory {@link TimerStore}. */
import type { ClaimTimersOptions, Timer, TimerStore } from '../spi.js';

interface Row extends Timer {
  claimedBy?: string;
  claimedUntil: number;
}

/**
 * Durable-timer semantics held in memory: a due timer is claimed by one claimer at a time.
 * `claimDue({ workflows })` asks `workflowOf` for each timer's workflow (`openMemoryStores`
 * passes its event store's); without it, a filtered claim matches no timer.
 */
export class MemoryTimerStore implements TimerStore {
  private readonly timers = new Map<string, Row>();

  /** @param workflowOf the workflow of an execution whose seq 0 exists, else undefined */
  constructor(private readonly workflowOf: (executionId: string) => string | undefined = () => undefined) {}

  async schedule(timer: Timer): Promise<void> {
    if (!this.timers.has(timer.timerId)) this.timers.set(timer.timerId, { ...timer, claimedUntil: 0 });
  }

  async claimDue(options: ClaimTimersOptions): Promise<Timer[]> {
    const due = [...this.timers.values()]
      .filter((row) => row.dueAt <= options.now && row.claimedUntil <= options.now)
      .filter((row) => options.workflows === undefined || this.runsIn(row, options.workflows))
      .sort((a, b) => a.dueAt - b.dueAt || (a.timerId < b.timerId ? -1 : 1))
      .slice(0, options.limit);
    for (const row of due) take(row, options);
    return due.map(plain);
  }

  private runsIn(row: Row, workflows: readonly string[]): boolean {
    const workflow = this.workflowOf(row.executionId);
    return workflow !== undefined && workflows.includes(workflow);
  }

  async claim(timerId: string, options: Omit<ClaimTimersOptions, 'limit'>): Promise<boolean> {
    const row = this.timers.get(timerId);
    if (row === undefined || row.dueAt > options.now || row.claimedUntil > options.now) return false;
    take(row, options);
    return true;
  }

  async complete(timerId: string): Promise<void> {
    this.timers.delete(timerId);
  }

  async forExecution(executionId: string): Promise<Timer[]> {
    return [...this.timers.values()].filter((row) => row.executionId === executionId).map(plain);
  }

  /** The earliest moment any timer is due and unclaimed: its due time, or when its claim lapses. */
  async nextDueAt(): Promise<number | null> {
    let next: number | null = null;
    for (const row of this.timers.values()) {
      const available = Math.max(row.dueAt, row.claimedUntil);
      if (next === null || available < next) next = available;
    }
    return next;
  }
}

function take(row: Row, options: Omit<ClaimTimersOptions, 'limit'>): void {
  row.claimedBy = options.owner;
  row.claimedUntil = options.now + options.claimTtlMs;
}

function plain(row: Row): Timer {
  return { timerId: row.timerId, executionId: row.executionId, dueAt: row.dueAt };
}
