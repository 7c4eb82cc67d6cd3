/**
 * CPU per fan-out item on PostgreSQL, split by process and phase (issue #18 item 11): one
 * fan-out of `total` items (chunks of 100) created and then worked in this process by one
 * `FanOutWorker`, which handles the chunk-ready messages one after another straight from the
 * outbox (no broker, no polling). It reports this process's CPU and that of the PostgreSQL
 * backends serving it (found by `application_name` in `pg_stat_activity`, read from
 * /proc/<pid>/stat, so the server must be on this machine) for the creation and for the work,
 * and the wall time spent in each statement of the work, by name; then a second fan-out whose
 * chunks are only claimed, for the claim statement's share of the server's CPU. CPU moves with a loaded host
 * less than wall time does; compare builds interleaved.
 */
import { openPostgresStores } from '@skein/store-postgres';
import type { TransportMessage } from '@skein/worker-runtime';
import { createFanOut, fanOutSettled } from '@skein/workflow-runtime/internal';
import pg from 'pg';
import type { Row } from '../report.js';
import { oneWorker, planOf } from './fan-out-statements.js';
import { trivial } from './fan-out-task.js';
import { PG_URL } from './postgres-core.js';
import { clockTicks, procCpuMs } from './postgres-cpu.js';

const CHUNK = 100;

/** Wall time and calls per statement name, by wrapping `pg.Client.prototype.query` while `on`. */
function timeStatements(): {
  on: (value: boolean) => void;
  byName: Map<string, { calls: number; ms: number }>;
} {
  const byName = new Map<string, { calls: number; ms: number }>();
  let on = false;
  const original = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]): unknown {
    const started = performance.now();
    const result = original.apply(this, args);
    const query = args[0] as { name?: unknown } | undefined;
    if (!on || typeof query !== 'object' || typeof query?.name !== 'string') return result;
    const name = query.name;
    if (result instanceof Promise)
      void result.then(
        () => {
          const entry = byName.get(name) ?? { calls: 0, ms: 0 };
          entry.calls += 1;
          entry.ms += performance.now() - started;
          byName.set(name, entry);
        },
        () => {},
      );
    return result;
  } as typeof pg.Client.prototype.query;
  const turn = (value: boolean): void => {
    on = value;
  };
  return { on: turn, byName };
}

/** CPU µs per item of this process and of its PostgreSQL backends, creating then working `total` items. */
export async function fanOutCpu(total: number): Promise<Row[]> {
  const timing = timeStatements();
  const ticks = clockTicks();
  const schema = `skein_bench_fanout_cpu_${process.pid}`;
  const url = new URL(PG_URL);
  url.searchParams.set('application_name', schema);
  const stores = await openPostgresStores({ url: url.toString(), schema, poolSize: 4 });
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  const serverMs = async (): Promise<number> => {
    const { rows } = await admin.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE application_name = $1',
      [schema],
    );
    let ms = 0;
    for (const { pid } of rows) ms += procCpuMs(pid, ticks) ?? 0;
    return ms;
  };
  const ownMs = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  const worker = oneWorker(stores);
  const plan = planOf('cpu');
  try {
    const [own0, server0] = [ownMs(), await serverMs()];
    await createFanOut({
      home: stores.fanOuts,
      shards: { main: stores.fanOuts },
      plan,
      task: trivial,
      items: (from, limit) =>
        Array.from({ length: Math.max(0, Math.min(limit, total - from)) }, (_, k) => ({ i: from + k })),
      owner: 'bench',
    });
    const [own1, server1] = [ownMs(), await serverMs()];
    const deliveries = await stores.outbox.claim({ limit: Math.ceil(total / CHUNK) + 10, leaseMs: 600_000 });
    const messages: TransportMessage[] = deliveries.map((d) => ({
      id: d.id,
      topic: d.topic,
      key: d.key,
      payload: d.payload,
      attempt: 1,
    }));
    const [own2, server2, started] = [ownMs(), await serverMs(), performance.now()];
    timing.on(true);
    for (const message of messages) await worker.handle(message);
    timing.on(false);
    const [own3, server3, seconds] = [ownMs(), await serverMs(), (performance.now() - started) / 1000];
    if (!(await fanOutSettled('cpu', { main: stores.fanOuts }, total, CHUNK)))
      throw new Error(`bench: the fan-out did not settle (${JSON.stringify(worker.stats())})`);
    // A second fan-out whose chunks are only claimed: the claim statement's share on its own.
    await createFanOut({
      home: stores.fanOuts,
      shards: { main: stores.fanOuts },
      plan: { ...plan, fanOutId: 'cpu-claims', executionId: 'bench-cpu-claims' },
      task: trivial,
      items: (from, limit) =>
        Array.from({ length: Math.max(0, Math.min(limit, total - from)) }, (_, k) => ({ i: from + k })),
      owner: 'bench',
    });
    const server4 = await serverMs();
    for (let chunkId = 0; chunkId < Math.ceil(total / CHUNK); chunkId += 1) {
      const claimed = await stores.fanOuts.claimChunk({
        fanOutId: 'cpu-claims',
        shard: 'main',
        chunkId,
        writeEpoch: 1,
        workerId: 'bench',
        now: Date.now(),
        leaseMs: 600_000,
      });
      if (!claimed.claimed) throw new Error(`bench: chunk ${chunkId} of cpu-claims was not claimed`);
    }
    const server5 = await serverMs();
    const perItem = (ms: number) => (ms * 1000) / total;
    const rows: Row[] = [
      {
        metric: `fan-out creation, creator CPU per item (${total} items)`,
        value: perItem(own1 - own0),
        unit: 'µs',
      },
      { metric: 'fan-out creation, PostgreSQL CPU per item', value: perItem(server1 - server0), unit: 'µs' },
      {
        metric: 'fan-out work, worker CPU per item (one worker, in process)',
        value: perItem(own3 - own2),
        unit: 'µs',
      },
      { metric: 'fan-out work, PostgreSQL CPU per item', value: perItem(server3 - server2), unit: 'µs' },
      { metric: 'fan-out work, items/s (one worker, no broker)', value: total / seconds, unit: 'items/s' },
      {
        metric: 'fan-out claims alone, PostgreSQL CPU per item',
        value: perItem(server5 - server4),
        unit: 'µs',
      },
    ];
    for (const [name, { calls, ms }] of timing.byName)
      rows.push({
        metric: `fan-out work, wall per item in ${name} (${calls} calls)`,
        value: perItem(ms),
        unit: 'µs',
      });
    return rows;
  } finally {
    await stores.close();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }
}
