/** The SQLite file itself: migrations, reopening, closing, options. */

import {
  InvalidSqliteOptionError,
  MigrationError,
  openSqliteStores,
  StoreClosedError,
} from '@skein/store-sqlite';
import { ExecutionAlreadyExistsError } from '@skein/workflow-runtime';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openConnection } from '../src/connection.js';
import { loadMigrations } from '../src/migrate.js';
import { tempDatabase } from './temp-stores.js';

const started = (executionId: string, envelopeId: string) => ({
  executionId,
  workflow: 'wf',
  expectedSeq: 0,
  fence: 0,
  events: [{ envelopeId, type: 'EXECUTION_STARTED' as const, payload: '{"x":1}', recordedAt: 5 }],
});

describe('sqlite file', () => {
  const dbs: ReturnType<typeof tempDatabase>[] = [];
  const fresh = () => {
    const db = tempDatabase();
    dbs.push(db);
    return db;
  };
  afterEach(() => {
    for (const db of dbs.splice(0)) db.remove();
  });

  it('migrations are numbered densely and applied once; reopening applies none again', async () => {
    const { path } = fresh();
    const ids = loadMigrations().map((migration) => migration.id);
    expect(ids).toEqual(ids.map((_, i) => i + 1));
    await openSqliteStores({ path }).close();
    await openSqliteStores({ path }).close();
    const raw = new Database(path);
    try {
      expect(raw.prepare('SELECT id FROM skein_migrations ORDER BY id').pluck().all()).toEqual(ids);
      expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    } finally {
      raw.close();
    }
  });

  it('a database migrated by a newer version is refused with MigrationError', () => {
    const { path } = fresh();
    openSqliteStores({ path }).close();
    const raw = new Database(path);
    raw
      .prepare('INSERT INTO skein_migrations (id, name, applied_at) VALUES (999, ?, 0)')
      .run('from_the_future');
    raw.close();
    expect(() => openSqliteStores({ path })).toThrow(MigrationError);
  });

  it('everything survives close and reopen; fences keep growing', async () => {
    const { path } = fresh();
    const first = openSqliteStores({ path });
    const fence = await first.events.acquireFence('kept');
    await first.events.append({ ...started('kept', 'env-kept'), fence });
    await first.snapshots.put({ executionId: 'kept', seq: 0, state: 'state' });
    await first.timers.schedule({ timerId: 't', executionId: 'kept', dueAt: 10 });
    await first.leases.claim('kept', 'owner', 1000, 0);
    await first.close();

    const second = openSqliteStores({ path });
    try {
      expect(await second.events.read('kept')).toEqual([
        {
          executionId: 'kept',
          seq: 0,
          envelopeId: 'env-kept',
          type: 'EXECUTION_STARTED',
          payload: '{"x":1}',
          fence,
          recordedAt: 5,
        },
      ]);
      expect(await second.events.getExecution('kept')).toMatchObject({ status: 'pending', workflow: 'wf' });
      expect(await second.events.acquireFence('kept')).toBe(fence + 1);
      expect(await second.snapshots.latest('kept')).toEqual({ executionId: 'kept', seq: 0, state: 'state' });
      expect(await second.timers.forExecution('kept')).toEqual([
        { timerId: 't', executionId: 'kept', dueAt: 10 },
      ]);
      expect(await second.leases.get('kept')).toEqual({ key: 'kept', owner: 'owner', expiresAt: 1000 });
      await expect(second.events.append(started('kept', 'env-again'))).rejects.toBeInstanceOf(
        ExecutionAlreadyExistsError,
      );
    } finally {
      await second.close();
    }
  });

  it('close() commits the appends still queued, then refuses new ones with StoreClosedError', async () => {
    const { path } = fresh();
    const stores = openSqliteStores({ path });
    const queued = [
      stores.events.append(started('q1', 'env-q1')),
      stores.events.append(started('q2', 'env-q2')),
    ];
    const closing = stores.close();
    await expect(stores.events.append(started('q3', 'env-q3'))).rejects.toBeInstanceOf(StoreClosedError);
    await closing;
    expect(await Promise.all(queued)).toEqual([
      { lastSeq: 0, status: 'pending' },
      { lastSeq: 0, status: 'pending' },
    ]);
    const reopened = openSqliteStores({ path });
    try {
      const page = await reopened.events.listExecutions();
      expect(page.items.map((item) => item.executionId)).toEqual(['q1', 'q2']);
    } finally {
      await reopened.close();
    }
  });

  it('bad options are refused before anything is opened', () => {
    const { path } = fresh();
    // @ts-expect-error: a durability that does not exist
    expect(() => openSqliteStores({ path, durability: 'fast' })).toThrow(InvalidSqliteOptionError);
    expect(() => openSqliteStores({ path, busyTimeoutMs: -1 })).toThrow(InvalidSqliteOptionError);
  });

  it('durability sets synchronous: FULL by default, NORMAL on request, in WAL mode', () => {
    for (const [durability, level] of [
      [undefined, 2],
      ['full', 2],
      ['normal', 1],
    ] as const) {
      const db = openConnection({ path: fresh().path, ...(durability === undefined ? {} : { durability }) });
      expect(db.pragma('synchronous', { simple: true }), String(durability)).toBe(level);
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      db.close();
    }
  });
});
