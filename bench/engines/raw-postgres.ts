/**
 * The physical limit on PostgreSQL: a raw `pg` single-row INSERT, committed on its own
 * (autocommit, one round trip), through a pool of 1 or 8 connections.
 */
import pg from 'pg';
import type { EngineSpec } from './engine.js';

/** A raw single-row commit through a pool of `connections`. */
export function rawPostgres(connections: 1 | 8): EngineSpec {
  return {
    name: `raw pg, 1-row commit, ${connections} conn`,
    kind: 'limit',
    store: 'postgres',
    tags: ['postgres', 'limit'],
    async open({ pgUrl }) {
      if (pgUrl === undefined) throw new Error('bench: raw pg needs a database URL');
      const pool = new pg.Pool({ connectionString: pgUrl, max: connections });
      await pool.query('CREATE TABLE IF NOT EXISTS raw (id bigserial PRIMARY KEY, v text NOT NULL)');
      const insert = { name: 'raw_insert', text: 'INSERT INTO raw (v) VALUES ($1)' };
      return {
        prepare: async () => async (i) => {
          await pool.query({ ...insert, values: [`{"run":${i}}`] });
        },
        close: () => pool.end(),
      };
    },
  };
}
