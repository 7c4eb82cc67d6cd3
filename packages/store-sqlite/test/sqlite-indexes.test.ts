/**
 * Listing and the signal inbox stay cheap on large tables: every such query walks an index,
 * never the table, never a sort.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openConnection } from '../src/connection.js';
import {
  listAll,
  listByStatus,
  listByWorkflow,
  listByWorkflowAndStatus,
  selectEvents,
} from '../src/event-queries.js';
import { loadMigrations, migrate } from '../src/migrate.js';
import {
  deleteInbox,
  insertBounded,
  markConsumed,
  selectPosition,
  selectWaiting,
  selectWaitingOfName,
  selectWaitingOfNames,
} from '../src/sqlite-signal-store.js';
import { tempDatabase } from './temp-stores.js';

describe('sqlite query plans', () => {
  const dbs: ReturnType<typeof tempDatabase>[] = [];
  afterEach(() => {
    for (const db of dbs.splice(0)) db.remove();
  });

  it('listing, reading and the signal inbox use indexes, with no full scan and no temp sort', () => {
    const file = tempDatabase();
    dbs.push(file);
    const db = openConnection({ path: file.path });
    try {
      migrate(db, loadMigrations());
      const plans = [
        [listAll(db), ['', 10]],
        [listByStatus(db), ['running', '', 10]],
        [listByWorkflow(db), ['wf', '', 10]],
        [listByWorkflowAndStatus(db), ['wf', 'running', '', 10]],
        [selectEvents(db), ['x', 0, -1]],
        // The signal inbox: a wait, a many-name wait, a page, the bound's count, the cursor.
        [selectWaitingOfName(db), ['x', 'approve', 0, 1]],
        [selectWaitingOfNames(db), ['x', '["a","b"]', 0, 1]],
        [selectWaiting(db), ['x', 0, 100]],
        [
          insertBounded(db),
          [{ signalId: 's', executionId: 'x', name: 'n', payload: '1', sentAt: 1, maxPending: 5 }],
        ],
        [selectPosition(db), ['x', 's']],
        [markConsumed(db), ['x', 's']],
        [deleteInbox(db), ['x']],
      ] as const;
      for (const [statement, params] of plans) {
        const plan = db
          .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${statement.source}`)
          .all(...params)
          .map((row) => row.detail)
          .join('; ');
        expect(plan, statement.source).toMatch(/USING (PRIMARY KEY|INDEX|COVERING INDEX)/);
        expect(plan, statement.source).not.toMatch(/TEMP B-TREE|SCAN skein_/);
      }
    } finally {
      db.close();
    }
  });
});
