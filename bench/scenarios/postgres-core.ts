/**
 * Core costs on PostgreSQL (issue #7): 3-step workflow latency, per-step overhead against a raw
 * `pg` single-row INSERT commit, and throughput at concurrency 50. Runs in a fresh schema of
 * the server at SKEIN_PG_URL (default: the local one), dropped afterwards.
 */
import { openPostgresStores, type PostgresStores } from '@skein/store-postgres';
import { createRuntime, type Runtime } from '@skein/workflow-runtime';
import { newId } from '@skein/workflow-runtime/internal';
import type { AppendRequest } from '@skein/workflow-runtime/spi';
import pg from 'pg';
import { stepsWorkflow as steps } from '../engines/skein.js';
import { interleaved, median, percentile, sequential, throughput } from '../measure.js';
import type { Row } from '../report.js';
import { drainOnce } from './drain.js';
import { stepLatencies } from './step-latencies.js';

/** The server the bench uses. */
export const PG_URL = process.env.SKEIN_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const zero = steps(0);
const three = steps(3);

/** Counts of the scenario's loops. */
export interface PostgresSizes {
  sequential: number;
  concurrent: number;
  /** Executions enqueued, then run by a Supervisor. */
  queued: number;
}

export const postgresFullSizes: PostgresSizes = { sequential: 1000, concurrent: 5000, queued: 2000 };
export const postgresSmokeSizes: PostgresSizes = { sequential: 20, concurrent: 200, queued: 50 };

/** Why the server cannot be used, or undefined when it answers. */
export async function postgresUnreachable(url = PG_URL): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * A raw single-row INSERT committed on its own (autocommit), on one connection of its own, in
 * a table of the bench schema; `close` drops nothing (the schema goes with the bench).
 */
async function rawInserter(
  schema: string,
): Promise<{ insert(i: number): Promise<unknown>; close(): Promise<void> }> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`CREATE TABLE "${schema}".raw (id bigserial PRIMARY KEY, v text NOT NULL)`);
  const text = `INSERT INTO "${schema}".raw (v) VALUES ($1)`;
  return {
    insert: (i) => client.query({ name: 'raw_insert', text, values: [`{"row":${i}}`] }),
    close: () => client.end(),
  };
}

async function withRuntime<T>(
  schema: string,
  poolSize: number,
  fn: (runtime: Runtime, stores: PostgresStores) => Promise<T>,
): Promise<T> {
  const stores = await openPostgresStores({ url: PG_URL, schema, poolSize });
  const runtime = createRuntime({ stores, workflows: [zero, three] });
  try {
    return await fn(runtime, stores);
  } finally {
    await runtime.close();
    await stores.close();
  }
}

/** Run every PostgreSQL measurement in a fresh schema; return the table rows. */
export async function postgresCore(sizes: PostgresSizes): Promise<Row[]> {
  const schema = `skein_bench_${process.pid}_${Date.now()}`;
  await admin((client) => client.query(`CREATE SCHEMA "${schema}"`));
  try {
    return await measure(schema, sizes);
  } finally {
    await admin((client) => client.query(`DROP SCHEMA "${schema}" CASCADE`));
  }
}

/** The events a step appends: the last step's completion and the next one's start. */
function stepEvents(): AppendRequest['events'] {
  const recordedAt = Date.now();
  return [
    { envelopeId: newId(), type: 'STEP_COMPLETED', payload: '{"position":0,"output":2}', recordedAt },
    { envelopeId: newId(), type: 'STEP_STARTED', payload: '{"position":1,"name":"s1"}', recordedAt },
  ];
}

/**
 * Where a step's cost goes, against the raw commit in the same turns of 50: the step's two event rows
 * as a plain INSERT (no fence or status check: the least the log's schema allows) and the
 * store's step append (the guarded short statement, see adr/0018), each on an execution of
 * its own that is running, as a workflow's steps are.
 */
async function stepLadder(
  schema: string,
  stores: PostgresStores,
  raw: (i: number) => Promise<unknown>,
  count: number,
): Promise<{ raw: number; plain: number; store: number }> {
  const client = new pg.Client({ connectionString: PG_URL, options: `-c search_path="${schema}"` });
  await client.connect();
  try {
    // A running execution per call, started through the store so the store's hint is set.
    await sequential(count, (i) =>
      stores.events.append({
        executionId: `ladder-${i}`,
        workflow: three.name,
        expectedSeq: 0,
        fence: 0,
        events: [
          { envelopeId: newId(), type: 'EXECUTION_STARTED', payload: '{"input":1}', recordedAt: Date.now() },
          { envelopeId: newId(), type: 'STEP_STARTED', payload: '{"position":0}', recordedAt: Date.now() },
        ],
      }),
    );
    const plainText =
      'INSERT INTO skein_events (execution_id, seq, envelope_id, type, payload, fence, recorded_at) ' +
      'VALUES ($1, 2, $2, $3, $4, 0, $5), ($1, 3, $6, $7, $8, 0, $9)';
    const samples = await interleaved(count, 50, {
      raw,
      plain: (i) => {
        const values = stepEvents().flatMap((event) => [
          event.envelopeId,
          event.type,
          event.payload,
          event.recordedAt,
        ]);
        return client.query({ name: 'ladder_plain', text: plainText, values: [`plain-${i}`, ...values] });
      },
      store: (i) =>
        stores.events.append({
          executionId: `ladder-${i}`,
          workflow: three.name,
          expectedSeq: 2,
          fence: 0,
          events: stepEvents(),
        }),
    });
    return { raw: median(samples.raw), plain: median(samples.plain), store: median(samples.store) };
  } finally {
    await client.end();
  }
}

async function measure(schema: string, sizes: PostgresSizes): Promise<Row[]> {
  const inserter = await rawInserter(schema);
  const { samples, raw, t0, t3, perStep, ladder } = await withRuntime(schema, 4, async (runtime, stores) => {
    const latencies = await stepLatencies(
      runtime,
      { zero: zero.name, three: three.name },
      inserter.insert,
      sizes.sequential,
      100,
    );
    return { ...latencies, ladder: await stepLadder(schema, stores, inserter.insert, sizes.sequential) };
  }).finally(() => inserter.close());
  const wfPerSec = await withRuntime(schema, 10, (runtime) =>
    throughput(sizes.concurrent, 50, (i) =>
      runtime.execute({ executionId: `c${i}`, workflow: three.name, input: { n: i } }),
    ),
  );
  const queue = await drainOnce(schema, sizes.queued);
  return [
    { metric: 'raw pg single-row INSERT commit round trip, median', value: raw, unit: 'ms' },
    { metric: '0-step workflow (postgres), median', value: t0, unit: 'ms' },
    { metric: '3-step workflow (postgres), median', value: t3, unit: 'ms' },
    { metric: '3-step workflow (postgres), p99', value: percentile(samples.three, 99), unit: 'ms' },
    {
      metric: 'per-step overhead, marginal ((T3 - T0) / 3) (postgres)',
      value: perStep,
      unit: 'ms',
      baseline: { name: 'raw commit', value: raw },
      target: '<= 1.3x raw',
      met: perStep <= 1.3 * raw,
    },
    {
      metric: "a step's two event rows, plain INSERT (no checks), median",
      value: ladder.plain,
      unit: 'ms',
      baseline: { name: 'raw commit (same turns)', value: ladder.raw },
    },
    {
      metric: 'step append through the store (guarded statement), median',
      value: ladder.store,
      unit: 'ms',
      baseline: { name: 'raw commit (same turns)', value: ladder.raw },
    },
    {
      metric: 'per step, all-in (T3 / 3) (postgres)',
      value: t3 / 3,
      unit: 'ms',
      baseline: { name: 'raw commit', value: raw },
    },
    {
      metric: '3-step workflows/s, concurrency 50, pool 10 (postgres)',
      value: wfPerSec,
      unit: 'wf/s',
      target: '>= 1000',
      met: wfPerSec >= 1000,
    },
    { metric: 'enqueues/s, 20 at a time (postgres)', value: queue.enqueues, unit: 'wf/s' },
    {
      metric: 'enqueued 3-step workflows/s drained by one Supervisor, concurrency 50 (postgres)',
      value: queue.drained,
      unit: 'wf/s',
    },
  ];
}
