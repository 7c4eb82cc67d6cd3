/**
 * FanOutWorker in one process over real SQLite files and StoreTransport: every item gets
 * exactly one accepted result (F6), retries wait for their window (F5), a duplicate delivery
 * does nothing (F3), and the summary is complete or errored, never partial (F7).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStores, type SqliteStores } from '@skein/store-sqlite';
import { createRuntime } from '@skein/workflow-runtime';
import { fanOutSettled, HOME_SHARD, summarizeFanOut } from '@skein/workflow-runtime/internal';
import { afterEach, describe, expect, it } from 'vitest';
import { FanOutWorker, StoreTransport, Supervisor } from '../../src/index.js';
import { create, itemRows, planOf, score, until } from './fixtures.js';

const dirs: string[] = [];
const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const closable of opened.splice(0).reverse()) await closable.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function openFile(name = 'skein.db'): SqliteStores {
  const dir = mkdtempSync(join(tmpdir(), 'skein-fanout-'));
  dirs.push(dir);
  const stores = openSqliteStores({ path: join(dir, name) });
  opened.push(stores);
  return stores;
}

function workerOn(
  stores: SqliteStores,
  options: Partial<ConstructorParameters<typeof FanOutWorker>[0]> = {},
) {
  const transport = new StoreTransport({ stores, pollIntervalMs: 10 });
  const worker = new FanOutWorker({
    home: stores.fanOuts,
    shards: { main: stores.fanOuts },
    transport,
    tasks: [score],
    parallelism: 4,
    leaseMs: 5_000,
    ...options,
  });
  opened.push({
    close: async () => {
      await worker.stop();
      await transport.close();
    },
  });
  return worker;
}

describe('FanOutWorker on SQLite with StoreTransport', () => {
  it('F6: two workers give every item of 1 000 exactly one accepted result; counts equal the plan', async () => {
    const stores = openFile();
    await create(stores.fanOuts, { main: stores.fanOuts }, planOf('f1', 50), 1_000);
    const workers = [workerOn(stores, { workerId: 'w1' }), workerOn(stores, { workerId: 'w2' })];
    await Promise.all(workers.map((w) => w.start()));
    await until(() => fanOutSettled('f1', { main: stores.fanOuts }, 1_000, 50), 60_000, 'every chunk done');
    const rows = await itemRows('f1', { main: stores.fanOuts });
    expect(rows.map((r) => r.index)).toEqual(Array.from({ length: 1_000 }, (_, i) => i));
    expect(rows.every((r) => r.status === 'succeeded' && r.attempt === 1)).toBe(true);
    const stats = workers.map((w) => w.stats());
    expect(stats.reduce((n, s) => n + s.results, 0)).toBe(1_000);
    expect(stats.reduce((n, s) => n + s.claimed, 0)).toBe(20);
    const summary = await summarizeFanOut({
      fanOutId: 'f1',
      shards: { main: stores.fanOuts },
      required: true,
      total: 1_000,
      aggregate: { init: () => 0, add: (sum: number, r: { score: number }) => sum + r.score },
    });
    expect(summary).toMatchObject({ status: 'complete', succeeded: 1_000, failed: 0, aggregate: 999_000 });
  }, 90_000);

  it('F4: a chunk’s last results go with its release; only the full batches before it are written on their own', async () => {
    const stores = openFile();
    // The real store, with its calls' batch sizes noted on the way through.
    const written: number[] = [];
    const withRelease: number[] = [];
    const fanOuts = new Proxy(stores.fanOuts, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop === 'recordResults')
          return (ref: never, results: readonly unknown[], now: number) => {
            written.push(results.length);
            return target.recordResults(ref, results as never, now);
          };
        if (prop === 'releaseChunk')
          return (ref: never, options: { results?: readonly unknown[] }) => {
            withRelease.push(options.results?.length ?? 0);
            return target.releaseChunk(ref, options as never);
          };
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    await create(stores.fanOuts, { main: stores.fanOuts }, planOf('f1', 10), 20);
    const worker = workerOn(stores, { home: fanOuts, shards: { main: fanOuts }, batchSize: 5 });
    await worker.start();
    await until(() => fanOutSettled('f1', { main: stores.fanOuts }, 20, 10), 30_000, 'both chunks done');
    expect(written).toEqual([5, 5]);
    expect(withRelease).toEqual([5, 5]);
    expect(worker.stats()).toMatchObject({ claimed: 2, results: 20, lost: 0 });
    const rows = await itemRows('f1', { main: stores.fanOuts });
    expect(rows.filter((r) => r.status === 'succeeded')).toHaveLength(20);
    // A chunk as large as the batch: its results and its release are one call.
    await create(stores.fanOuts, { main: stores.fanOuts }, planOf('f2', 5), 5);
    await until(() => fanOutSettled('f2', { main: stores.fanOuts }, 5, 5), 30_000, 'f2 done');
    expect(written).toEqual([5, 5]);
    expect(withRelease).toEqual([5, 5, 5]);
  }, 60_000);

  it('F5: a flaky item waits for its retry window (no claim meanwhile) and succeeds on attempt 2', async () => {
    const stores = openFile();
    await create(stores.fanOuts, { main: stores.fanOuts }, planOf('f1', 10), 10, (i) =>
      i === 3 ? 'flaky' : 'ok',
    );
    const worker = workerOn(stores);
    await worker.start();
    await until(
      async () =>
        (await stores.fanOuts.chunk('f1', 'main', 0))?.status === 'open' &&
        (await stores.fanOuts.items('f1')).some((i) => i.status === 'retry_scheduled'),
      10_000,
      'the retry window',
    );
    const waiting = await stores.fanOuts.chunk('f1', 'main', 0);
    expect(waiting?.claims).toBe(1);
    await until(() => fanOutSettled('f1', { main: stores.fanOuts }, 10, 10), 10_000, 'the chunk done');
    const chunk = await stores.fanOuts.chunk('f1', 'main', 0);
    // One claim for the first pass, one after the window: no spinning while it waited.
    expect(chunk).toMatchObject({ status: 'done', claims: 2, processingFailures: 0 });
    const rows = await itemRows('f1', { main: stores.fanOuts });
    expect(rows[3]).toMatchObject({ status: 'succeeded', attempt: 2 });
    expect(rows.filter((r) => r.attempt === 1)).toHaveLength(9);
  }, 30_000);

  it('F7: one required item failing for good gives an errored summary with its reason and no aggregate', async () => {
    const stores = openFile();
    await create(stores.fanOuts, { main: stores.fanOuts }, planOf('f1', 25), 100, (i) =>
      i === 42 ? 'fail' : 'ok',
    );
    const worker = workerOn(stores);
    await worker.start();
    await until(() => fanOutSettled('f1', { main: stores.fanOuts }, 100, 25), 20_000, 'every chunk done');
    const summary = await summarizeFanOut({
      fanOutId: 'f1',
      shards: { main: stores.fanOuts },
      required: true,
      total: 100,
      aggregate: { init: () => 0, add: (sum: number, r: { score: number }) => sum + r.score },
    });
    expect(summary).toMatchObject({ status: 'errored', succeeded: 99, failed: 1 });
    expect(summary.aggregate).toBeUndefined();
    expect(summary.errors).toEqual([{ index: 42, error: expect.stringContaining('case 42 is broken') }]);
    const optional = await summarizeFanOut({
      fanOutId: 'f1',
      shards: { main: stores.fanOuts },
      required: false,
      total: 100,
      aggregate: { init: () => 0, add: (n: number) => n + 1 },
    });
    expect(optional).toMatchObject({ status: 'complete', aggregate: 99 });
  }, 30_000);

  it('F3: the same chunk message handled twice claims once; the second finds it finished and does nothing', async () => {
    const stores = openFile();
    await create(stores.fanOuts, { main: stores.fanOuts }, planOf('f1', 5), 5);
    const [delivery] = await stores.outbox.list({ limit: 10 });
    const message = { id: delivery!.id, topic: delivery!.topic, payload: delivery!.payload, attempt: 1 };
    const worker = workerOn(stores);
    expect(await worker.handle(message)).toBe('ack');
    expect(await worker.handle(message)).toBe('ack');
    expect(worker.stats()).toMatchObject({ claimed: 1, refused: 1, results: 5 });
    expect((await itemRows('f1', { main: stores.fanOuts })).map((r) => r.attempt)).toEqual([1, 1, 1, 1, 1]);
  });

  it('placement: a worker refuses a message of a shard it does not serve, and one of another write epoch does nothing', async () => {
    const a = openFile('a.db');
    const b = openFile('b.db');
    const shards = { a: a.fanOuts, b: b.fanOuts };
    await create(a.fanOuts, shards, planOf('f1', 5, ['a', 'b']), 20);
    expect((await b.fanOuts.counts('f1')).chunks.open).toBe(2);
    const worker = new FanOutWorker({
      home: a.fanOuts,
      shards,
      serves: ['a'],
      transport: new StoreTransport({ stores: a }),
      tasks: [score],
    });
    const deliveries = await a.outbox.list({ limit: 10 });
    const of = (shard: string) => {
      const d = deliveries.find((m) => JSON.parse(m.payload).shard === shard)!;
      return { id: d.id, topic: d.topic, payload: d.payload, attempt: 1 };
    };
    expect(await worker.handle(of('b'))).toBe('quarantine');
    const stale = of('a');
    stale.payload = JSON.stringify({ ...JSON.parse(stale.payload), writeEpoch: 2 });
    expect(await worker.handle(stale)).toBe('ack');
    expect(worker.stats()).toMatchObject({ claimed: 0, refused: 1 });
    expect(await worker.handle(of('a'))).toBe('ack');
    expect(worker.stats().claimed).toBe(1);
  });

  it('placement: two shards on two SQLite files, one StoreTransport each; retries wait in the shard file; one result per item', async () => {
    const a = openFile('a.db');
    const b = openFile('b.db');
    const shards = { a: a.fanOuts, b: b.fanOuts };
    await create(a.fanOuts, shards, planOf('f1', 20, ['a', 'b']), 400, (i) =>
      i % 50 === 7 ? 'flaky' : 'ok',
    );
    const transports = [
      new StoreTransport({ stores: a, pollIntervalMs: 10 }),
      new StoreTransport({ stores: b, pollIntervalMs: 10 }),
    ];
    const worker = new FanOutWorker({
      home: a.fanOuts,
      shards,
      transport: transports,
      tasks: [score],
      parallelism: 4,
    });
    opened.push({
      close: async () => {
        await worker.stop();
        for (const t of transports) await t.close();
      },
    });
    await worker.start();
    await until(() => fanOutSettled('f1', shards, 400, 20), 30_000, 'every chunk on both shards done');
    expect((await a.fanOuts.counts('f1')).items.succeeded).toBe(200);
    expect((await b.fanOuts.counts('f1')).items.succeeded).toBe(200);
    const rows = await itemRows('f1', shards);
    expect(rows.map((r) => r.index)).toEqual(Array.from({ length: 400 }, (_, i) => i));
    expect(rows.filter((r) => r.attempt === 2).map((r) => r.index)).toEqual([
      7, 57, 107, 157, 207, 257, 307, 357,
    ]);
    // Shard b's retry messages were written to b's own outbox, with the release that caused them.
    const retries = (await b.outbox.list({ limit: 100 })).filter(
      (d) => JSON.parse(d.payload).reason === 'retry',
    );
    expect(retries.length).toBe(4);
    expect(retries.every((d) => d.topic === 'fanout.chunk.ready.b')).toBe(true);
  }, 60_000);

  it('F8: the leader recovers expired chunks in the runtime’s shard stores too', async () => {
    const a = openFile('a.db');
    const b = openFile('b.db');
    const shards = { [HOME_SHARD]: a.fanOuts, b: b.fanOuts };
    await create(a.fanOuts, shards, planOf('f1', 5, [HOME_SHARD, 'b']), 10);
    const claimed = await b.fanOuts.claimChunk({
      fanOutId: 'f1',
      shard: 'b',
      chunkId: 1,
      writeEpoch: 1,
      workerId: 'gone',
      now: Date.now(),
      leaseMs: 50,
    });
    expect(claimed.claimed).toBe(true);
    const runtime = createRuntime({ stores: a, workflows: [], shards: { b }, lease: { ttlMs: 500 } });
    const supervisor = new Supervisor({ runtime, stores: a, leaseTtlMs: 500, tickIntervalMs: 50 });
    opened.push({
      close: async () => {
        await supervisor.stop();
        await runtime.close();
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const report = await supervisor.tick();
    expect(report.fanOutChunks).toEqual([
      expect.objectContaining({ shard: 'b', chunkId: 1, outcome: 'requeued', staleAttempts: 5 }),
    ]);
    expect((await b.outbox.list({ limit: 10 })).map((d) => JSON.parse(d.payload).reason)).toEqual([
      'recovery',
    ]);
  });
});
