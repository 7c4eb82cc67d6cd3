/**
 * The outbox relayed to RabbitMQ (issue #17): messages/s an `OutboxPublisher` relays from
 * SQLite and from PostgreSQL with confirms, against raw `rabbitmq-client`
 * publish-with-confirm in the same run; and the latency an enqueue takes to be heard through
 * RabbitMQ against PostgreSQL `NOTIFY`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AmqpTransport, HEADERS } from '@skein/broker-amqp';
import { openPostgresStores } from '@skein/store-postgres';
import { openSqliteStores } from '@skein/store-sqlite';
import { OutboxPublisher } from '@skein/worker-runtime-local';
import { createRuntime, defineWorkflow, type OutboxStore } from '@skein/workflow-runtime';
import { newId } from '@skein/workflow-runtime/internal';
import { EXECUTION_PENDING_TOPIC, type OutboxMessage } from '@skein/workflow-runtime/spi';
import pg from 'pg';
import { Connection } from 'rabbitmq-client';
import { z } from 'zod';
import { median, nowMs, percentile } from '../measure.js';
import type { Row } from '../report.js';
import { PG_URL } from './postgres-core.js';

export const AMQP_URL = process.env.SKEIN_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const TOPIC = 'bench';
const BATCH = 200;
/** Messages a relay publishes, untimed, on a fresh store before it is timed. */
const WARM_UP = 1_000;

/** Counts of the scenario. */
export interface OutboxSizes {
  messages: number;
  enqueues: number;
}
export const outboxFullSizes: OutboxSizes = { messages: 50_000, enqueues: 50 };
export const outboxSmokeSizes: OutboxSizes = { messages: 400, enqueues: 3 };

/** Why the broker cannot be reached, or undefined when it answers. */
export async function amqpUnreachable(): Promise<string | undefined> {
  const connection = new Connection({ url: AMQP_URL });
  connection.on('error', () => undefined);
  try {
    await connection.onConnect(3_000, true);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await connection.close().catch(() => undefined);
  }
}

const prefixOf = (what: string) =>
  `skeinbench.${what}.${process.pid}.${Math.random().toString(36).slice(2, 7)}`;

/** Delete a prefix's queues and exchanges, the retry queues of the default backoff among them. */
async function dropTopology(prefix: string, topics: readonly string[]): Promise<void> {
  await AmqpTransport.deleteTopology({ url: AMQP_URL, prefix, topics });
}

/** What the raw publisher sends with each message besides its id. */
type RawMessages = 'relay' | 'bare';

/**
 * Raw rabbitmq-client: persistent, mandatory publishes with confirms on one channel, `window`
 * in flight at a time, on a socket with Nagle's algorithm off (as the transport's), to a
 * durable exchange and a quorum queue declared once, outside the clock (as the relay's
 * topology is). Each message carries a fresh message id and, as `relay`, the headers the relay
 * sends with it (`AmqpTransport`: its attempt, key and topic), so raw and relay put the same
 * messages on the wire; `bare` sends the id alone.
 */
async function rawPublisher() {
  const prefix = prefixOf('raw');
  const connection = new Connection({ url: AMQP_URL, noDelay: true });
  const queue = `${prefix}.${TOPIC}`;
  const publisher = connection.createPublisher({
    confirm: true,
    exchanges: [{ exchange: prefix, type: 'direct', durable: true }],
    queues: [{ queue, durable: true, arguments: { 'x-queue-type': 'quorum' } }],
    queueBindings: [{ queue, exchange: prefix, routingKey: TOPIC }],
  });
  const body = JSON.stringify({ executionId: 'x', workflow: 'w', version: 1 });
  const envelope = { exchange: prefix, routingKey: TOPIC, durable: true, mandatory: true };
  await publisher.send(envelope, body);
  const propertiesOf = (messages: RawMessages, i: number) =>
    messages === 'bare'
      ? { ...envelope, messageId: newId() }
      : {
          ...envelope,
          messageId: newId(),
          headers: { [HEADERS.attempt]: 1, [HEADERS.key]: `x${i}`, [HEADERS.topic]: TOPIC },
        };
  return {
    /** Publish `n` messages, `window` in flight at a time; messages/s. */
    async rate(n: number, window: number, messages: RawMessages): Promise<number> {
      await connection.queuePurge({ queue });
      const start = nowMs();
      for (let sent = 0; sent < n; sent += window)
        await Promise.all(
          Array.from({ length: Math.min(window, n - sent) }, (_, k) =>
            publisher.send(propertiesOf(messages, sent + k), body),
          ),
        );
      return n / ((nowMs() - start) / 1000);
    },
    async close() {
      await publisher.close();
      await connection.close();
      await dropTopology(prefix, [TOPIC]);
    },
  };
}

/** An AmqpTransport on a prefix of its own, connected (topology declared) once, outside the clock. */
async function relayTransport() {
  const prefix = prefixOf('relay');
  const transport = await AmqpTransport.connect({ url: AMQP_URL, prefix, topics: [TOPIC] });
  const body = JSON.stringify({ executionId: 'x', workflow: 'w', version: 1 });
  // The publisher's channel is opened (and the topology declared on it) by its first send.
  await transport.publish([{ id: newId(), topic: TOPIC, payload: body, attempt: 1 }]);
  const purger = new Connection({ url: AMQP_URL });
  return {
    transport,
    purge: () => purger.queuePurge({ queue: transport.topology.queueOf(TOPIC) }),
    async close() {
      await transport.close();
      await purger.close();
      await dropTopology(prefix, [TOPIC]);
    },
  };
}

/**
 * `outbox` as the relay sees it, counting the deliveries it marks published: `settled`
 * resolves once `n` are. The relay is timed to that moment, with no query of the bench's own
 * on the store while it runs (a poll would take the host's CPU from the relay it times).
 */
function countingSettlements(
  outbox: OutboxStore,
  n: number,
): { outbox: OutboxStore; settled: Promise<void> } {
  let marked = 0;
  let resolve!: () => void;
  const settled = new Promise<void>((r) => {
    resolve = r;
  });
  const count = (answers: readonly boolean[]) => {
    for (const answer of answers) if (answer) marked += 1;
    if (marked >= n) resolve();
  };
  const markPublishedAll: OutboxStore['markPublishedAll'] = async (claims, now) => {
    const answers = await outbox.markPublishedAll(claims, now);
    count(answers);
    return answers;
  };
  const markPublished: OutboxStore['markPublished'] = async (id, token, now) => {
    const answer = await outbox.markPublished(id, token, now);
    count([answer]);
    return answer;
  };
  const counting = new Proxy(outbox, {
    get(target, property) {
      if (property === 'markPublishedAll') return markPublishedAll;
      if (property === 'markPublished') return markPublished;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { outbox: counting, settled };
}

/**
 * Write `n` messages to `outbox` (untimed), then time an `OutboxPublisher` relaying them all:
 * until it marked `n` deliveries published. Then (untimed) no delivery may be left pending.
 */
async function relay(
  outbox: OutboxStore,
  n: number,
  amqp: Awaited<ReturnType<typeof relayTransport>>,
): Promise<number> {
  const body = JSON.stringify({ executionId: 'x', workflow: 'w', version: 1 });
  for (let i = 0; i < n; i += 1_000) {
    const page: OutboxMessage[] = Array.from({ length: Math.min(1_000, n - i) }, (_, k) => ({
      id: newId(),
      topic: TOPIC,
      key: `x${i + k}`,
      payload: body,
      createdAt: Date.now(),
    }));
    await outbox.write(page);
  }
  await amqp.purge();
  const counted = countingSettlements(outbox, n);
  const publisher = new OutboxPublisher({
    stores: { outbox: counted.outbox },
    transport: amqp.transport,
    batchSize: BATCH,
    concurrency: CONCURRENCY,
  });
  const start = nowMs();
  publisher.start();
  await counted.settled;
  const rate = n / ((nowMs() - start) / 1000);
  await publisher.stop();
  const left = await outbox.list({ status: 'pending', limit: 1 });
  if (left.length > 0) throw new Error(`the relay marked ${n} published and left ${left[0]!.id} pending`);
  return rate;
}

/**
 * Relay `WARM_UP` messages untimed, then time the relay of `n`: the rate of a relay that has
 * run a while (its connections opened, its statements prepared, the server's caches for them
 * filled), as raw publish is measured on a publisher that has sent before.
 */
async function warmRelay(
  outbox: OutboxStore,
  n: number,
  amqp: Awaited<ReturnType<typeof relayTransport>>,
): Promise<number> {
  await relay(outbox, WARM_UP, amqp);
  return relay(outbox, n, amqp);
}

async function relaySqlite(n: number, amqp: Awaited<ReturnType<typeof relayTransport>>): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'skein-bench-outbox-'));
  const stores = openSqliteStores({ path: join(dir, 'bench.db') });
  try {
    return await warmRelay(stores.outbox, n, amqp);
  } finally {
    await stores.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function withPostgres<T>(
  fn: (stores: Awaited<ReturnType<typeof openPostgresStores>>) => Promise<T>,
): Promise<T> {
  const schema = `skein_bench_outbox_${process.pid}_${Math.random().toString(36).slice(2, 7)}`;
  const stores = await openPostgresStores({ url: PG_URL, schema });
  try {
    return await fn(stores);
  } finally {
    await stores.close();
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  }
}

const noop = defineWorkflow({ name: 'bench-noop', input: z.object({}), async run() {} });

/**
 * Enqueue one execution at a time on a runtime with `outbox: true` and time until it is
 * heard: through RabbitMQ (outbox → publisher woken by the outbox channel → broker →
 * consumer) and through the pending `NOTIFY` the same append sends.
 */
async function enqueueLatency(n: number): Promise<{ amqp: number[]; notify: number[] }> {
  return withPostgres(async (stores) => {
    const prefix = prefixOf('latency');
    const transport = await AmqpTransport.connect({
      url: AMQP_URL,
      prefix,
      topics: [EXECUTION_PENDING_TOPIC],
    });
    const publisher = new OutboxPublisher({
      stores,
      transport,
      wakeups: stores.wakeups,
      pollIntervalMs: 1_000,
    });
    const runtime = createRuntime({ stores, workflows: [noop], outbox: true });
    const heardAmqp = new Map<string, number>();
    const heardNotify = new Map<string, number>();
    const consumer = await transport.consume(EXECUTION_PENDING_TOPIC, async (m) => {
      heardAmqp.set(m.key ?? '', nowMs());
    });
    const unsubscribe = await stores.wakeups.subscribe('pending', (id) => heardNotify.set(id, nowMs()));
    publisher.start();
    const amqp: number[] = [];
    const notify: number[] = [];
    for (let i = 0; i < n + 2; i++) {
      const id = newId();
      const start = nowMs();
      await runtime.enqueue(noop, {}, { executionId: id });
      while (!heardAmqp.has(id) || !heardNotify.has(id))
        await new Promise((resolve) => setImmediate(resolve));
      if (i < 2) continue; // warm-up
      amqp.push(heardAmqp.get(id)! - start);
      notify.push(heardNotify.get(id)! - start);
    }
    await unsubscribe();
    await publisher.stop();
    await consumer.close();
    await runtime.close();
    await transport.close();
    await dropTopology(prefix, [EXECUTION_PENDING_TOPIC]);
    return { amqp, notify };
  });
}

/** Interleaved rounds of the throughput measurements: the load of a shared host touches all of them alike. */
const ROUNDS = 5;
/** Batches an `OutboxPublisher` keeps in flight. */
const CONCURRENCY = 2;

/**
 * Every outbox measurement, in one run: `ROUNDS` interleaved rounds of raw publish of the
 * relay's messages with the relay's window (`BATCH * CONCURRENCY` in flight: the relay's loops
 * each keep one batch unconfirmed at a time), the relay from SQLite and (with PostgreSQL) from
 * PostgreSQL, raw publish with one batch (`BATCH`) in flight, and raw publish of bare messages
 * (an id, no headers) with the relay's window; each of `messages / ROUNDS`; their medians. The
 * relay is compared with raw publish of the same messages at the same window: the same number
 * of unconfirmed publishes on one channel. Topology (exchanges, quorum queues, channels) is set
 * up once, outside the clock, for raw and relay alike.
 */
export async function outbox(sizes: OutboxSizes, postgres: boolean): Promise<Row[]> {
  const each = Math.max(1, Math.floor(sizes.messages / ROUNDS));
  const window = BATCH * CONCURRENCY;
  const rates = {
    raw: [] as number[],
    rawBatch: [] as number[],
    rawBare: [] as number[],
    sqlite: [] as number[],
    pg: [] as number[],
  };
  const raw = await rawPublisher();
  const amqp = await relayTransport();
  try {
    for (let round = 0; round < ROUNDS; round++) {
      rates.raw.push(await raw.rate(each, window, 'relay'));
      rates.sqlite.push(await relaySqlite(each, amqp));
      if (postgres) rates.pg.push(await withPostgres((stores) => warmRelay(stores.outbox, each, amqp)));
      rates.rawBatch.push(await raw.rate(each, BATCH, 'relay'));
      rates.rawBare.push(await raw.rate(each, window, 'bare'));
    }
  } finally {
    await amqp.close();
    await raw.close();
  }
  const rawRate = median(rates.raw);
  /** A relay's rate and its ratio: the median of the rounds' ratios, each against raw in its own round. */
  const relayRow = (store: string, got: readonly number[]): Row => {
    const ratio = median(got.map((rate, round) => rate / rates.raw[round]!));
    const value = median(got);
    return {
      metric: `OutboxPublisher from ${store} to RabbitMQ, confirmed and settled (batch ${BATCH}, ${CONCURRENCY} in flight); ratio = median of ${ROUNDS} rounds' ratios`,
      value,
      unit: 'msg/s',
      baseline: { name: `raw, the relay's messages, ${window} in flight`, value: value / ratio },
      target: '>= 0.7x raw',
      met: ratio >= 0.7,
    };
  };
  /** The same relay against raw publish of bare messages, for comparison (no target). */
  const bareRow = (store: string, got: readonly number[]): Row => {
    const ratio = median(got.map((rate, round) => rate / rates.rawBare[round]!));
    const value = median(got);
    return {
      metric: `OutboxPublisher from ${store}, against raw publish of bare messages`,
      value,
      unit: 'msg/s',
      baseline: { name: `raw, bare messages, ${window} in flight`, value: value / ratio },
    };
  };
  const rows: Row[] = [
    {
      metric: `raw rabbitmq-client publish with confirms of the relay's messages (id and x-skein headers; ${window} in flight: the relay's window), median of ${ROUNDS} rounds`,
      value: rawRate,
      unit: 'msg/s',
    },
    {
      metric: `raw rabbitmq-client publish with confirms of the relay's messages (${BATCH} in flight: one batch)`,
      value: median(rates.rawBatch),
      unit: 'msg/s',
    },
    {
      metric: `raw rabbitmq-client publish with confirms of bare messages (an id, no headers; ${window} in flight)`,
      value: median(rates.rawBare),
      unit: 'msg/s',
      baseline: { name: "raw, the relay's messages", value: rawRate },
    },
    relayRow('SQLite', rates.sqlite),
    bareRow('SQLite', rates.sqlite),
  ];
  if (!postgres) return rows;
  rows.push(relayRow('PostgreSQL', rates.pg), bareRow('PostgreSQL', rates.pg));
  const latency = await enqueueLatency(sizes.enqueues);
  const notifyMedian = median(latency.notify);
  rows.push(
    {
      metric: `enqueue heard through PostgreSQL NOTIFY, median of ${sizes.enqueues}`,
      value: notifyMedian,
      unit: 'ms',
    },
    {
      metric: 'enqueue heard through RabbitMQ (outbox, publisher woken by NOTIFY, broker), median',
      value: median(latency.amqp),
      unit: 'ms',
      baseline: { name: 'NOTIFY', value: notifyMedian },
    },
    { metric: 'enqueue heard through RabbitMQ, p95', value: percentile(latency.amqp, 95), unit: 'ms' },
  );
  return rows;
}
