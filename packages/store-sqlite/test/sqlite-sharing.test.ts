/** Several connections and processes on one file: they see each other's writes, fences and claims. */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { openSqliteStores } from '@skein/store-sqlite';
import { StaleFenceError } from '@skein/workflow-runtime';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { loadMigrations } from '../src/migrate.js';
import { tempDatabase } from './temp-stores.js';

const run = promisify(execFile);
const child = fileURLToPath(new URL('./fixtures/share-file.ts', import.meta.url));
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** Run the child fixture on `path`; returns its report. */
async function spawnChild(
  path: string,
  name: string,
  startAt: number,
): Promise<{ fence: number; claimed: string[] }> {
  const args = ['--import', 'tsx', child, path, name, String(startAt)];
  const { stdout } = await run(process.execPath, args, { cwd: repoRoot });
  return JSON.parse(stdout) as { fence: number; claimed: string[] };
}

describe('sqlite: one file, many connections', () => {
  const dbs: ReturnType<typeof tempDatabase>[] = [];
  afterEach(() => {
    for (const db of dbs.splice(0)) db.remove();
  });
  const fresh = () => {
    const db = tempDatabase();
    dbs.push(db);
    return db.path;
  };

  it('two connections see each other’s writes, fences, timers and leases', async () => {
    const path = fresh();
    const a = openSqliteStores({ path });
    const b = openSqliteStores({ path });
    try {
      const mine = await a.events.acquireFence('x');
      const theirs = await b.events.acquireFence('x');
      expect(theirs).toBeGreaterThan(mine);
      expect(await a.events.currentFence('x')).toBe(theirs);
      const draft = { type: 'EXECUTION_STARTED' as const, payload: '{}', recordedAt: 1 };
      const stale = a.events.append({
        executionId: 'x',
        workflow: 'w',
        expectedSeq: 0,
        fence: mine,
        events: [{ ...draft, envelopeId: 'e-a' }],
      });
      await expect(stale).rejects.toBeInstanceOf(StaleFenceError);
      await b.events.append({
        executionId: 'x',
        workflow: 'w',
        expectedSeq: 0,
        fence: theirs,
        events: [{ ...draft, envelopeId: 'e-b' }],
      });
      expect((await a.events.read('x')).map((event) => event.envelopeId)).toEqual(['e-b']);
      expect(
        (await a.events.listExecutions({ status: ['pending'] })).items.map((item) => item.executionId),
      ).toEqual(['x']);

      for (let i = 0; i < 20; i += 1)
        await a.timers.schedule({ timerId: `t${i}`, executionId: 'x', dueAt: i });
      const claims = await Promise.all([
        a.timers.claimDue({ now: 100, limit: 12, owner: 'a', claimTtlMs: 1000 }),
        b.timers.claimDue({ now: 100, limit: 12, owner: 'b', claimTtlMs: 1000 }),
      ]);
      expect(
        claims
          .flat()
          .map((timer) => timer.timerId)
          .sort(),
      ).toEqual(Array.from({ length: 20 }, (_, i) => `t${i}`).sort());
      expect(await b.leases.claim('leader', 'b', 1000, 0)).not.toBeNull();
      expect(await a.leases.claim('leader', 'a', 1000, 500)).toBeNull();
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('three processes opening a fresh file at once migrate it once and get distinct fences', async () => {
    const path = fresh();
    const startAt = Date.now() + 2000;
    const reports = await Promise.all(['p1', 'p2', 'p3'].map((name) => spawnChild(path, name, startAt)));
    expect(reports.map((report) => report.fence).sort()).toEqual([1, 2, 3]);
    const raw = new Database(path, { readonly: true });
    try {
      const applied = raw.prepare('SELECT id FROM skein_migrations ORDER BY id').pluck().all();
      expect(applied).toEqual(loadMigrations().map((migration) => migration.id));
      expect(raw.prepare('SELECT count(*) FROM skein_events').pluck().get()).toBe(3);
    } finally {
      raw.close();
    }
  });

  it('a due timer is claimed by exactly one of three processes', async () => {
    const path = fresh();
    const stores = openSqliteStores({ path });
    const ids = Array.from({ length: 60 }, (_, i) => `timer-${String(i).padStart(2, '0')}`);
    for (const timerId of ids) await stores.timers.schedule({ timerId, executionId: 'x', dueAt: 0 });
    await stores.close();
    const startAt = Date.now() + 2000;
    const reports = await Promise.all(['p1', 'p2', 'p3'].map((name) => spawnChild(path, name, startAt)));
    expect(reports.flatMap((report) => report.claimed).sort()).toEqual(ids);
  });
});
