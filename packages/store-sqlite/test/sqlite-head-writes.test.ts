/**
 * An append writes the head row only at seq 0 and when the status changes, and a status
 * change names only the status, so SQLite rewrites only the indexes that hold it and leaves
 * the workflow index alone (adr/0069).
 */
import type { AppendRequest } from '@skein/workflow-runtime/spi';
import type Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openConnection } from '../src/connection.js';
import { updateStatus, upsertHead } from '../src/event-queries.js';
import { loadMigrations, migrate } from '../src/migrate.js';
import { SqliteEventStore } from '../src/sqlite-event-store.js';
import { tempDatabase } from './temp-stores.js';

/** Record the SQL of every statement `db` runs from now on (statements prepared after this call). */
function recordRuns(db: Database.Database): string[] {
  const ran: string[] = [];
  const prepare = db.prepare.bind(db);
  db.prepare = ((source: string) => {
    const statement = prepare(source);
    const run = statement.run.bind(statement);
    statement.run = (...args: unknown[]) => {
      ran.push(source);
      return run(...args);
    };
    return statement;
  }) as typeof db.prepare;
  return ran;
}

/** The index b-trees a statement opens for writing. */
function indexesWritten(db: Database.Database, statement: Database.Statement): string[] {
  const roots = new Map(
    db
      .prepare<[], { name: string; rootpage: number }>(
        "SELECT name, rootpage FROM sqlite_master WHERE type = 'index' AND tbl_name = 'skein_executions'",
      )
      .all()
      .map((row) => [row.rootpage, row.name]),
  );
  const params = Array.from(statement.source.matchAll(/\?/g), () => null);
  const program = db.prepare(`EXPLAIN ${statement.source}`).all(...params) as {
    opcode: string;
    p2: number;
  }[];
  return program
    .filter((op) => op.opcode === 'OpenWrite' && roots.has(op.p2))
    .map((op) => roots.get(op.p2)!)
    .sort();
}

const append = (expectedSeq: number, ...types: string[]): AppendRequest => ({
  executionId: 'x',
  workflow: 'w',
  expectedSeq,
  fence: 0,
  events: types.map((type, i) => ({
    envelopeId: `01J0000000000000000000000${expectedSeq + i}`,
    type,
    payload: '{}',
    recordedAt: 1,
  })) as AppendRequest['events'],
});

describe('sqlite head writes', () => {
  const files: ReturnType<typeof tempDatabase>[] = [];
  afterEach(() => {
    for (const file of files.splice(0)) file.remove();
  });

  it('a status change is an UPDATE of the status alone; an append that keeps the status writes no head', async () => {
    const file = tempDatabase();
    files.push(file);
    const db = openConnection({ path: file.path });
    try {
      migrate(db, loadMigrations());
      const ran = recordRuns(db);
      const events = new SqliteEventStore(db);
      const headWrites = () =>
        ran.filter((sql) => /skein_executions\b/.test(sql) && !sql.startsWith('SELECT'));

      await events.append(append(0, 'EXECUTION_STARTED'));
      expect(headWrites()).toEqual([upsertHead(db).source]);
      await events.append(append(1, 'STEP_STARTED')); // pending -> running
      await events.append(append(2, 'STEP_COMPLETED')); // stays running
      await events.append(append(3, 'EXECUTION_COMPLETED')); // running -> completed
      expect(headWrites()).toEqual([upsertHead(db).source, updateStatus(db).source, updateStatus(db).source]);
      expect(await events.getExecution('x')).toMatchObject({
        workflow: 'w',
        status: 'completed',
        sequence: 3,
      });
      expect(await events.listExecutions({ workflow: 'w', status: ['completed'] })).toMatchObject({
        items: [{ executionId: 'x' }],
      });

      // What the UPDATE saves: the upsert sets the workflow too, so it rewrites the workflow index.
      expect(indexesWritten(db, updateStatus(db))).toEqual([
        'skein_executions_status',
        'skein_executions_workflow_status',
      ]);
      expect(indexesWritten(db, upsertHead(db))).toContain('skein_executions_workflow');
    } finally {
      db.close();
    }
  });
});
