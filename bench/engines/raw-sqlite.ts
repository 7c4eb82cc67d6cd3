/**
 * The physical limit on SQLite: raw better-sqlite3 commits of one row, or of a 100-row batch in
 * one transaction, on a WAL file at the same `synchronous` level as Skein's durability.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { EngineSpec } from './engine.js';

/**
 * Commits that bring a new file's WAL to its steady state before anything is timed. While a
 * WAL grows, each commit also extends the file (an fdatasync that flushes its size too); once
 * it has wrapped at the auto-checkpoint (1,000 pages) commits overwrite it in place, which
 * takes ~30% less on this machine. Skein's file is past that point after its warm-up, so a
 * raw commit timed on a growing WAL would be a slow baseline.
 */
export const WAL_WARM_COMMITS = 3000;

/** A raw SQLite commit of `rows` rows at `durability`. */
export function rawSqlite(durability: 'full' | 'normal', rows: 1 | 100): EngineSpec {
  return {
    name: rows === 1 ? `raw sqlite ${durability}, 1-row commit` : `raw sqlite ${durability}, 100-row batch`,
    kind: 'limit',
    store: durability === 'full' ? 'sqlite-full' : 'sqlite-normal',
    rowsPerRun: rows,
    tags: ['sqlite', 'limit'],
    async open({ dir }) {
      const db = new Database(join(dir, `raw-${durability}-${rows}.db`));
      db.pragma('journal_mode = WAL');
      db.pragma(`synchronous = ${durability === 'full' ? 'FULL' : 'NORMAL'}`);
      db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
      const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
      const batch = db.transaction((i: number) => {
        for (let k = 0; k < rows; k++) insert.run(`{"run":${i},"row":${k}}`);
      });
      for (let i = 0; i < WAL_WARM_COMMITS; i++) insert.run('{"warm":true}');
      return {
        prepare: async () => async (i) => {
          batch(i);
        },
        close: async () => {
          db.close();
        },
      };
    },
  };
}
