/**
 * Statements per fan-out chunk on PostgreSQL (issue #18): what creation sends per chunk (seeds,
 * creation cursor, dispatch) and what a worker sends per chunk (claim, results, release), counted
 * in this process around each phase (every `pg` query call, BEGIN and COMMIT included). The
 * numbers depend on the code, not on the host's load. One worker handles the chunk-ready
 * messages one after another straight from the outbox, so no broker or polling is counted.
 */
import { openPostgresStores, type PostgresStores } from '@skein/store-postgres';
import type { TransportMessage } from '@skein/worker-runtime';
import { FanOutWorker, StoreTransport } from '@skein/worker-runtime-local';
import { createFanOut, fanOutSettled } from '@skein/workflow-runtime/internal';
import type { FanOutPlan } from '@skein/workflow-runtime/spi';
import pg from 'pg';
import { countPgStatements, pgStatementsSent } from '../counting/pg-statements.js';
import type { Row } from '../report.js';
import { trivial } from './fan-out-task.js';
import { PG_URL } from './postgres-core.js';

const CHUNK = 100;

/** The plan of a bench fan-out of the trivial task on one shard, `main`, in chunks of 100. */
export function planOf(fanOutId: string): FanOutPlan {
  return {
    fanOutId,
    executionId: `bench-${fanOutId}`,
    name: 'cases',
    task: trivial.name,
    taskVersion: trivial.version,
    chunkSize: CHUNK,
    shards: ['main'],
    required: true,
    maxAttempts: 3,
  };
}

/** One `FanOutWorker` of the trivial task on `stores`' one shard, over a `StoreTransport`. */
export function oneWorker(stores: PostgresStores): FanOutWorker {
  return new FanOutWorker({
    home: stores.fanOuts,
    shards: { main: stores.fanOuts },
    transport: new StoreTransport({ stores }),
    tasks: [trivial],
    parallelism: 16,
    onError: () => {},
  });
}

/** Statements per chunk of creating, then working, a fan-out of `total` items (chunks of 100). */
export async function fanOutStatements(total: number): Promise<Row[]> {
  countPgStatements();
  const database = new URL(PG_URL).pathname.slice(1);
  const schema = `skein_bench_fanout_statements_${process.pid}`;
  const stores = await openPostgresStores({ url: PG_URL, schema, poolSize: 4 });
  const worker = oneWorker(stores);
  const chunks = Math.ceil(total / CHUNK);
  try {
    const before = pgStatementsSent(database);
    await createFanOut({
      home: stores.fanOuts,
      shards: { main: stores.fanOuts },
      plan: planOf('counted'),
      task: trivial,
      items: (from, limit) =>
        Array.from({ length: Math.max(0, Math.min(limit, total - from)) }, (_, k) => ({ i: from + k })),
      owner: 'bench',
    });
    const created = pgStatementsSent(database);
    const deliveries = await stores.outbox.claim({ limit: chunks + 10, leaseMs: 600_000 });
    const messages: TransportMessage[] = deliveries.map((d) => ({
      id: d.id,
      topic: d.topic,
      key: d.key,
      payload: d.payload,
      attempt: 1,
    }));
    const claimed = pgStatementsSent(database);
    for (const message of messages) await worker.handle(message);
    const worked = pgStatementsSent(database);
    if (!(await fanOutSettled('counted', { main: stores.fanOuts }, total, CHUNK)))
      throw new Error(`bench: the counted fan-out did not settle (${JSON.stringify(worker.stats())})`);
    return [
      {
        metric: `fan-out creation, statements per chunk (PostgreSQL, ${total} items)`,
        value: (created - before) / chunks,
        unit: 'statements',
      },
      {
        metric: `fan-out worker, statements per chunk (PostgreSQL, claim + results + release)`,
        value: (worked - claimed) / chunks,
        unit: 'statements',
      },
    ];
  } finally {
    await stores.close();
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  }
}
