/**
 * {@link TimerStore} on PostgreSQL. Claims lock the rows they take (`FOR UPDATE SKIP LOCKED`,
 * rechecked on the newest row version), so a due timer is claimed exactly once across
 * processes. Scheduling a new timer notifies the `timers` wake-up channel in the same statement.
 * Text holding U+0000 is refused with `NulInTextError` when it would be stored; an id holding
 * it matches no timer.
 */
import type { TimerStore } from '@skein/workflow-runtime';
import type { ClaimTimersOptions, Timer } from '@skein/workflow-runtime/spi';
import type { Database, Query } from './database.js';
import { hasNul, refuseNul } from './nul-text.js';
import { channelName, WAKEUP_TIMERS } from './wakeups.js';

/** Durable timers in PostgreSQL, with the semantics of `MemoryTimerStore`. */
export class PostgresTimerStore implements TimerStore {
  private readonly channel: string;

  /** @param db the shared pool, with the schema migrated (see `openPostgresStores`). */
  constructor(private readonly db: Database) {
    this.channel = channelName(db.schema, WAKEUP_TIMERS);
  }

  /** Schedule a timer; a new one sends its `dueAt` on the `timers` wake-up channel at commit. */
  async schedule(timer: Timer): Promise<void> {
    refuseNul('timers.schedule', timer.executionId, {
      'the timer id': timer.timerId,
      'the execution id': timer.executionId,
    });
    await this.db.query('timers.schedule', insertTimer(timer, this.channel));
  }

  async claimDue(options: ClaimTimersOptions): Promise<Timer[]> {
    refuseNul('timers.claimDue', undefined, { 'the claim owner': options.owner });
    if (options.workflows === undefined)
      return (await this.db.query<Timer>('timers.claimDue', claimDueTimers(options))).rows;
    // A name holding U+0000 names no workflow the store can hold: it matches nothing.
    const workflows = options.workflows.filter((name) => !hasNul(name));
    return (await this.db.query<Timer>('timers.claimDue', claimDueTimersOf(options, workflows))).rows;
  }

  async claim(timerId: string, options: Omit<ClaimTimersOptions, 'limit'>): Promise<boolean> {
    refuseNul('timers.claim', undefined, { 'the claim owner': options.owner });
    if (hasNul(timerId)) return false;
    return ((await this.db.query('timers.claim', claimTimer(timerId, options))).rowCount ?? 0) > 0;
  }

  async complete(timerId: string): Promise<void> {
    if (hasNul(timerId)) return;
    await this.db.query('timers.complete', deleteTimer(timerId));
  }

  async forExecution(executionId: string): Promise<Timer[]> {
    if (hasNul(executionId)) return [];
    return (await this.db.query<Timer>('timers.forExecution', selectTimersOf(executionId))).rows;
  }

  /** The earliest moment any timer is due and unclaimed: its due time, or when its claim lapses. */
  async nextDueAt(): Promise<number | null> {
    const rows = (await this.db.query<{ next: number | null }>('timers.nextDueAt', selectNextDueAt())).rows;
    return rows[0]?.next ?? null;
  }
}

const TIMER_COLUMNS = 'timer_id AS "timerId", execution_id AS "executionId", due_at AS "dueAt"';

/** Schedule a timer unless its id exists; notify `channel` with its due time when it is new. */
function insertTimer(timer: Timer, channel: string): Query {
  return {
    name: 'skein_insert_timer',
    text:
      'WITH added AS (INSERT INTO skein_timers (timer_id, execution_id, due_at) VALUES ($1, $2, $3) ' +
      'ON CONFLICT (timer_id) DO NOTHING RETURNING due_at) ' +
      'SELECT pg_notify($4, due_at::text) FROM added',
    values: [timer.timerId, timer.executionId, timer.dueAt, channel],
  };
}

/** Claim up to `limit` due, unclaimed timers, oldest due first; rows another claimer holds are skipped. */
function claimDueTimers({ owner, now, claimTtlMs, limit }: ClaimTimersOptions): Query {
  return {
    name: 'skein_claim_due_timers',
    text:
      'WITH claimed AS (UPDATE skein_timers SET claimed_by = $1, claimed_until = $2 WHERE timer_id IN (' +
      'SELECT timer_id FROM skein_timers WHERE due_at <= $3 AND claimed_until <= $3 ' +
      `ORDER BY due_at, timer_id LIMIT $4 FOR UPDATE SKIP LOCKED) RETURNING ${TIMER_COLUMNS}) ` +
      'SELECT * FROM claimed ORDER BY "dueAt", "timerId"',
    values: [owner, now + claimTtlMs, now, limit],
  };
}

/** `claimDueTimers` of executions of one of `workflows`. */
function claimDueTimersOf(
  { owner, now, claimTtlMs, limit }: ClaimTimersOptions,
  workflows: readonly string[],
): Query {
  return {
    name: 'skein_claim_due_timers_of',
    text:
      'WITH claimed AS (UPDATE skein_timers SET claimed_by = $1, claimed_until = $2 WHERE timer_id IN (' +
      'SELECT t.timer_id FROM skein_timers t JOIN skein_executions x ON x.execution_id = t.execution_id ' +
      'WHERE t.due_at <= $3 AND t.claimed_until <= $3 AND x.workflow = ANY($5::text[]) ' +
      `ORDER BY t.due_at, t.timer_id LIMIT $4 FOR UPDATE OF t SKIP LOCKED) RETURNING ${TIMER_COLUMNS}) ` +
      'SELECT * FROM claimed ORDER BY "dueAt", "timerId"',
    values: [owner, now + claimTtlMs, now, limit, workflows],
  };
}

/** Claim one timer if it is due and unclaimed. */
function claimTimer(timerId: string, { owner, now, claimTtlMs }: Omit<ClaimTimersOptions, 'limit'>): Query {
  return {
    name: 'skein_claim_timer',
    text:
      'UPDATE skein_timers SET claimed_by = $1, claimed_until = $2 ' +
      'WHERE timer_id = $3 AND due_at <= $4 AND claimed_until <= $4',
    values: [owner, now + claimTtlMs, timerId, now],
  };
}

/** Delete a timer that fired. */
function deleteTimer(timerId: string): Query {
  return {
    name: 'skein_delete_timer',
    text: 'DELETE FROM skein_timers WHERE timer_id = $1',
    values: [timerId],
  };
}

/** Timers of one execution, soonest first. */
function selectTimersOf(executionId: string): Query {
  return {
    name: 'skein_select_timers_of',
    text: `SELECT ${TIMER_COLUMNS} FROM skein_timers WHERE execution_id = $1 ORDER BY due_at, timer_id`,
    values: [executionId],
  };
}

/** Earliest time a timer is due and unclaimed (index skein_timers_available). */
function selectNextDueAt(): Query {
  return {
    name: 'skein_select_next_due_at',
    text: 'SELECT min(greatest(due_at, claimed_until)) AS next FROM skein_timers',
    values: [],
  };
}
