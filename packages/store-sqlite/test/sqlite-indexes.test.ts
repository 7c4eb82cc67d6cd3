/** Listing stays cheap on large tables: every listing query walks an index, never the table, never a sort. */
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
import { tempDatabase } from './temp-stores.js';

describe('sqlite query plans', () => {
  const dbs: ReturnType<typeof tempDatabase>[] = [];
  afterEach(() => {
    for (const db of dbs.splice(0)) db.remove();
  });

  it('listing and reading use indexes, with no full scan and no temp sort', () => {
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
