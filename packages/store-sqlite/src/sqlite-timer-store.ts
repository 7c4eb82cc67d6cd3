/**
 * {@link TimerStore} on SQLite. A claim is one UPDATE … RETURNING, which holds the write lock
 * for its whole run, so a due timer is claimed exactly once even across processes.
 */
import type { TimerStore } from '@skein/workflow-runtime';
import type { ClaimTimersOptions, Timer } from '@skein/workflow-runtime/spi';
import type Database from 'better-sqlite3';
import { compareCodePoints } from './order.js';

type Db = Database.Database;

/** Durable timers in SQLite, with the semantics of `MemoryTimerStore`. */
export class SqliteTimerStore implements TimerStore {
  private readonly statements: {
    insert: ReturnType<typeof insertTimer>;
    claimDue: ReturnType<typeof claimDueTimers>;
    claimDueOf: ReturnType<typeof claimDueTimersOf>;
    claimOne: ReturnType<typeof claimTimer>;
    remove: ReturnType<typeof deleteTimer>;
    forExecution: ReturnType<typeof selectTimersOf>;
    nextDueAt: ReturnType<typeof selectNextDueAt>;
  };

  /** @param db an open connection with the schema migrated (see `openSqliteStores`). */
  constructor(db: Db) {
    this.statements = {
      insert: insertTimer(db),
      claimDue: claimDueTimers(db),
      claimDueOf: claimDueTimersOf(db),
      claimOne: claimTimer(db),
      remove: deleteTimer(db),
      forExecution: selectTimersOf(db),
      nextDueAt: selectNextDueAt(db),
    };
  }

  async schedule(timer: Timer): Promise<void> {
    this.statements.insert.run(timer.timerId, timer.executionId, timer.dueAt);
  }

  async claimDue(options: ClaimTimersOptions): Promise<Timer[]> {
    const { now, limit, owner, claimTtlMs, workflows } = options;
    const claim = { owner, until: now + claimTtlMs, now, limit };
    const claimed =
      workflows === undefined
        ? this.statements.claimDue.all(claim)
        : this.statements.claimDueOf.all({ ...claim, workflows: JSON.stringify(workflows) });
    // RETURNING gives no order; restore the oldest-first order the claim used.
    return claimed.sort(byDueThenId);
  }

  async claim(timerId: string, options: Omit<ClaimTimersOptions, 'limit'>): Promise<boolean> {
    const { owner, now, claimTtlMs } = options;
    return this.statements.claimOne.run({ owner, until: now + claimTtlMs, timerId, now }).changes > 0;
  }

  async complete(timerId: string): Promise<void> {
    this.statements.remove.run(timerId);
  }

  async forExecution(executionId: string): Promise<Timer[]> {
    return this.statements.forExecution.all(executionId);
  }

  /** The earliest moment any timer is due and unclaimed: its due time, or when its claim lapses. */
  async nextDueAt(): Promise<number | null> {
    return this.statements.nextDueAt.get() ?? null;
  }
}

function byDueThenId(a: Timer, b: Timer): number {
  return a.dueAt - b.dueAt || compareCodePoints(a.timerId, b.timerId);
}

const TIMER_COLUMNS = 'timer_id AS timerId, execution_id AS executionId, due_at AS dueAt';

/** Schedule a timer; an existing id is left as it is (timer id, execution id, due at). */
function insertTimer(db: Db): Database.Statement<[string, string, number]> {
  return db.prepare(
    'INSERT INTO skein_timers (timer_id, execution_id, due_at) VALUES (?, ?, ?) ON CONFLICT (timer_id) DO NOTHING',
  );
}

/** Claim up to `limit` due, unclaimed timers, oldest due first. */
function claimDueTimers(
  db: Db,
): Database.Statement<{ owner: string; until: number; now: number; limit: number }, Timer> {
  return db.prepare(
    'UPDATE skein_timers SET claimed_by = @owner, claimed_until = @until WHERE timer_id IN (' +
      'SELECT timer_id FROM skein_timers WHERE due_at <= @now AND claimed_until <= @now ' +
      `ORDER BY due_at, timer_id LIMIT @limit) RETURNING ${TIMER_COLUMNS}`,
  );
}

/** `claimDueTimers` of executions of the workflows in `workflows` (a JSON array of names). */
function claimDueTimersOf(
  db: Db,
): Database.Statement<
  { owner: string; until: number; now: number; limit: number; workflows: string },
  Timer
> {
  return db.prepare(
    'UPDATE skein_timers SET claimed_by = @owner, claimed_until = @until WHERE timer_id IN (' +
      'SELECT t.timer_id FROM skein_timers t JOIN skein_executions x ON x.execution_id = t.execution_id ' +
      'WHERE t.due_at <= @now AND t.claimed_until <= @now ' +
      'AND x.workflow IN (SELECT value FROM json_each(@workflows)) ' +
      `ORDER BY t.due_at, t.timer_id LIMIT @limit) RETURNING ${TIMER_COLUMNS}`,
  );
}

/** Claim one timer if it is due and unclaimed. */
function claimTimer(
  db: Db,
): Database.Statement<{ owner: string; until: number; timerId: string; now: number }> {
  return db.prepare(
    'UPDATE skein_timers SET claimed_by = @owner, claimed_until = @until ' +
      'WHERE timer_id = @timerId AND due_at <= @now AND claimed_until <= @now',
  );
}

/** Delete a timer that fired. */
function deleteTimer(db: Db): Database.Statement<[string]> {
  return db.prepare('DELETE FROM skein_timers WHERE timer_id = ?');
}

/** Timers of one execution, soonest first. */
function selectTimersOf(db: Db): Database.Statement<[string], Timer> {
  return db.prepare(
    `SELECT ${TIMER_COLUMNS} FROM skein_timers WHERE execution_id = ? ORDER BY due_at, timer_id`,
  );
}

/** Earliest time a timer is due and unclaimed (index skein_timers_available). */
function selectNextDueAt(db: Db): Database.Statement<[], number | null> {
  return db.prepare<[], number | null>('SELECT min(max(due_at, claimed_until)) FROM skein_timers').pluck();
}
