/**
 * Durable streams (issue #23, adr/0051) on SQLite (a file, `durability: 'full'`) and PostgreSQL
 * (a schema of its own): writes/s of one execution writing `entries` entries one after another
 * (each `write` resolves once durable), with a reader following it live; and the delay from the
 * start of each `write` to the reader receiving the entry (p50, p95 over every round). The
 * baseline is a raw single-row commit of the same store (`synchronous = FULL` in WAL for
 * SQLite), measured in interleaved rounds with the stream: the rates are the rounds' medians.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPostgresStores } from '@skein/store-postgres';
import { openSqliteStores } from '@skein/store-sqlite';
import { createRuntime, defineWorkflow, type Stores } from '@skein/workflow-runtime';
import Database from 'better-sqlite3';
import pg from 'pg';
import { z } from 'zod';
import { median, nowMs, percentile } from '../measure.js';
import type { Row } from '../report.js';
import { PG_URL } from './postgres-core.js';

/** Counts of the scenario. */
export interface StreamSizes {
  entries: number;
  rounds: number;
}
export const streamFullSizes: StreamSizes = { entries: 1_000, rounds: 5 };
export const streamSmokeSizes: StreamSizes = { entries: 50, rounds: 1 };

const writer = defineWorkflow({
  name: 'bench-stream',
  input: z.object({ entries: z.number() }),
  async run(ctx, { entries }) {
    const out = ctx.stream('tokens');
    for (let i = 0; i < entries; i++) await out.write(nowMs());
    return entries;
  },
});

/** One execution writes, one reader follows: writes/s and per-entry delays. */
async function measureStream(stores: Stores, entries: number): Promise<{ rate: number; delays: number[] }> {
  const runtime = createRuntime({ stores, workflows: [writer], maintenance: false });
  try {
    const id = `stream-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
    const start = nowMs();
    const handle = await runtime.start(writer, { entries }, { executionId: id });
    const delays: number[] = [];
    const reading = (async () => {
      for await (const entry of runtime.readStream<number>(id, 'tokens', { maxPollMs: 5 }))
        delays.push(nowMs() - entry.value);
    })();
    await handle.result();
    const rate = entries / ((nowMs() - start) / 1000);
    await reading;
    return { rate, delays };
  } finally {
    await runtime.close();
  }
}

async function rawSqliteRate(path: string, count: number): Promise<number> {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE IF NOT EXISTS raw (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO raw (v) VALUES (?)');
  const start = nowMs();
  for (let i = 0; i < count; i++) insert.run(`{"row":${i}}`);
  const rate = count / ((nowMs() - start) / 1000);
  db.close();
  return rate;
}

async function rawPostgresRate(schema: string, count: number): Promise<number> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(
      `CREATE TABLE IF NOT EXISTS "${schema}".raw (id bigserial PRIMARY KEY, v text NOT NULL)`,
    );
    const text = `INSERT INTO "${schema}".raw (v) VALUES ($1)`;
    const start = nowMs();
    for (let i = 0; i < count; i++)
      await client.query({ name: 'raw_insert', text, values: [`{"row":${i}}`] });
    return count / ((nowMs() - start) / 1000);
  } finally {
    await client.end();
  }
}

/** `rounds` interleaved rounds of the raw commit and the stream; medians of the rates, every delay. */
async function interleaved(
  sizes: StreamSizes,
  raw: () => Promise<number>,
  stream: () => Promise<{ rate: number; delays: number[] }>,
): Promise<{ raw: number; rate: number; delays: number[] }> {
  const raws: number[] = [];
  const rates: number[] = [];
  const delays: number[] = [];
  for (let round = 0; round < sizes.rounds; round++) {
    raws.push(await raw());
    const measured = await stream();
    rates.push(measured.rate);
    delays.push(...measured.delays);
  }
  return { raw: median(raws), rate: median(rates), delays };
}

function rows(store: string, measured: { raw: number; rate: number; delays: number[] }): Row[] {
  return [
    {
      metric: `${store}: stream writes/s (one execution, each write durable)`,
      value: measured.rate,
      unit: 'writes/s',
      baseline: { name: 'raw single-row commit', value: measured.raw },
    },
    { metric: `${store}: write-to-reader delay p50`, value: median(measured.delays), unit: 'ms' },
    { metric: `${store}: write-to-reader delay p95`, value: percentile(measured.delays, 95), unit: 'ms' },
  ];
}

/** SQLite, then PostgreSQL when `postgres` is true. */
export async function streams(sizes: StreamSizes, postgres: boolean): Promise<Row[]> {
  const out: Row[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'skein-bench-streams-'));
  try {
    const stores = openSqliteStores({ path: join(dir, 'skein.db'), durability: 'full' });
    try {
      const measured = await interleaved(
        sizes,
        () => rawSqliteRate(join(dir, 'raw.db'), sizes.entries),
        () => measureStream(stores, sizes.entries),
      );
      out.push(...rows('SQLite', measured));
    } finally {
      await stores.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (!postgres) return out;
  const schema = `skein_bench_streams_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA "${schema}"`);
    const stores = await openPostgresStores({ url: PG_URL, schema });
    try {
      const measured = await interleaved(
        sizes,
        () => rawPostgresRate(schema, sizes.entries),
        () => measureStream(stores, sizes.entries),
      );
      out.push(...rows('PostgreSQL', measured));
    } finally {
      await stores.close();
    }
  } finally {
    await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
    await admin.end();
  }
  return out;
}
