/**
 * {@link BlockageStore} on PostgreSQL: one row per execution, recorded in one upsert. Text
 * holding U+0000 is refused with `NulInTextError` by `record`; an id holding it has no row.
 */
import type { BlockageStore } from '@skein/workflow-runtime';
import type { Blockage, BlockageFailure } from '@skein/workflow-runtime/spi';
import type { Database, Query } from './database.js';
import { hasNul, refuseNul } from './nul-text.js';

/** Blockages in PostgreSQL, with the semantics of `MemoryBlockageStore`. */
export class PostgresBlockageStore implements BlockageStore {
  /** @param db the shared pool, with the schema migrated (see `openPostgresStores`). */
  constructor(private readonly db: Database) {}

  async record(failure: BlockageFailure): Promise<Blockage> {
    refuseNul('blockages.record', failure.executionId, {
      'the execution id': failure.executionId,
      'the code': failure.code,
      'the message': failure.message,
    });
    return (await this.db.query<Blockage>('blockages.record', upsertBlockage(failure))).rows[0]!;
  }

  async get(executionId: string): Promise<Blockage | null> {
    if (hasNul(executionId)) return null;
    return (await this.db.query<Blockage>('blockages.get', selectBlockage(executionId))).rows[0] ?? null;
  }

  async list(query: { after?: string; limit: number }): Promise<Blockage[]> {
    refuseNul('blockages.list', undefined, { 'the cursor': query.after ?? '' });
    return (
      await this.db.query<Blockage>('blockages.list', selectBlockagesAfter(query.after ?? '', query.limit))
    ).rows;
  }

  async clear(executionId: string): Promise<void> {
    if (hasNul(executionId)) return;
    await this.db.query('blockages.clear', deleteBlockage(executionId));
  }
}

const COLUMNS = 'execution_id AS "executionId", seq, code, message, since, attempts, last_at AS "lastAt"';

/** Insert, or count one more attempt at the same seq (keeping since), or start over at another. */
function upsertBlockage(failure: BlockageFailure): Query {
  return {
    name: 'skein_upsert_blockage',
    text:
      'INSERT INTO skein_blockages AS b (execution_id, seq, code, message, since, attempts, last_at) ' +
      'VALUES ($1, $2, $3, $4, $5, 1, $5) ON CONFLICT (execution_id) DO UPDATE SET ' +
      'attempts = CASE WHEN b.seq = excluded.seq THEN b.attempts + 1 ELSE 1 END, ' +
      'since = CASE WHEN b.seq = excluded.seq THEN b.since ELSE excluded.since END, ' +
      'seq = excluded.seq, code = excluded.code, message = excluded.message, last_at = excluded.last_at ' +
      `RETURNING ${COLUMNS}`,
    values: [failure.executionId, failure.seq, failure.code, failure.message, failure.at],
  };
}

/** The row of one execution. */
function selectBlockage(executionId: string): Query {
  return {
    name: 'skein_select_blockage',
    text: `SELECT ${COLUMNS} FROM skein_blockages WHERE execution_id = $1`,
    values: [executionId],
  };
}

/** A page of rows after an id, by id. */
function selectBlockagesAfter(after: string, limit: number): Query {
  return {
    name: 'skein_select_blockages_after',
    text: `SELECT ${COLUMNS} FROM skein_blockages WHERE execution_id > $1 ORDER BY execution_id LIMIT $2`,
    values: [after, limit],
  };
}

/** Delete the row of one execution. */
function deleteBlockage(executionId: string): Query {
  return {
    name: 'skein_delete_blockage',
    text: 'DELETE FROM skein_blockages WHERE execution_id = $1',
    values: [executionId],
  };
}
