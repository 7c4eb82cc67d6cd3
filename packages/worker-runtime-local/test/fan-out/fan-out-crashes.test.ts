/**
 * Fan-out crashes with real child processes on one SQLite file: a worker SIGKILLed mid-chunk
 * (F3, F8), a stale worker (frozen past its lease, the chunk re-claimed) that comes back
 * and tries to write (F4), and a creator SIGKILLed between two seeds (F2). In every case each
 * item has exactly one accepted result and the counts equal the plan (F6).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { openSqliteStores, type SqliteStores } from '@skein/store-sqlite';
import { createRuntime } from '@skein/workflow-runtime';
import { fanOutSettled } from '@skein/workflow-runtime/internal';
import { afterAll, describe, expect, it } from 'vitest';
import { FanOutWorker, StoreTransport, Supervisor } from '../../src/index.js';
import { exited, spawnScript } from '../support/spawn.js';
import { create, itemRows, planOf, score, until } from './fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'skein-fanout-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Lines of a child's stdout, as they come. */
function linesOf(child: ChildProcess): AsyncIterator<string> {
  return createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
}

async function waitForLine(lines: AsyncIterator<string>, match: (line: string) => boolean): Promise<string> {
  for (;;) {
    const next = await lines.next();
    if (next.done) throw new Error('the child ended before the line came');
    if (match(next.value)) return next.value;
  }
}

/** A supervisor over `stores` that only does the leader's fan-out recovery in these tests. */
function supervisorOf(stores: SqliteStores) {
  const runtime = createRuntime({ stores, workflows: [], lease: { ttlMs: 500 } });
  const supervisor = new Supervisor({ runtime, stores, leaseTtlMs: 500, tickIntervalMs: 50 });
  return {
    supervisor,
    close: async () => {
      await supervisor.stop();
      await runtime.close();
    },
  };
}

function finisher(stores: SqliteStores, workerId: string) {
  const transport = new StoreTransport({ stores, pollIntervalMs: 10 });
  const worker = new FanOutWorker({
    home: stores.fanOuts,
    shards: { main: stores.fanOuts },
    transport,
    tasks: [score],
    workerId,
    leaseMs: 2_000,
  });
  return {
    worker,
    close: async () => {
      await worker.stop();
      await transport.close();
    },
  };
}

describe('fan-out crashes across real processes', () => {
  it('F8: a worker SIGKILLed mid-chunk; the leader recovers the chunk and another worker finishes it, one result per item', async () => {
    const path = join(dir, 'killed-worker.db');
    const stores = openSqliteStores({ path });
    await create(stores.fanOuts, { main: stores.fanOuts }, planOf('f1', 20), 20);
    const child = spawnScript('../fan-out/child.ts', ['worker', path, 'doomed', '400']);
    const lines = linesOf(child);
    const exit = exited(child);
    await waitForLine(lines, (line) => line === 'started 8');
    await until(async () => (await stores.fanOuts.counts('f1')).items.succeeded >= 4, 10_000, 'some results');
    child.kill('SIGKILL');
    expect((await exit).signal).toBe('SIGKILL');
    const atKill = await stores.fanOuts.counts('f1');
    expect(atKill.items.running).toBeGreaterThan(0);
    expect(atKill.items.succeeded).toBeLessThan(20);
    const { supervisor, close } = supervisorOf(stores);
    await until(async () => (await supervisor.tick()).fanOutChunks.length > 0, 10_000, 'the recovery');
    await close();
    const { worker, close: stop } = finisher(stores, 'finisher');
    await worker.start();
    await until(() => fanOutSettled('f1', { main: stores.fanOuts }, 20, 20), 20_000, 'the chunk done');
    await stop();
    const rows = await itemRows('f1', { main: stores.fanOuts });
    expect(rows.map((r) => r.index)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(rows.every((r) => r.status === 'succeeded')).toBe(true);
    const byDoomed = rows.filter((r) => r.workerId === 'doomed');
    expect(byDoomed.length).toBe(atKill.items.succeeded);
    expect(
      rows.filter((r) => r.workerId === 'finisher').every((r) => r.attempt >= 2 || r.attempt === 1),
    ).toBe(true);
    expect(byDoomed.every((r) => r.attempt === 1)).toBe(true);
    expect(await stores.fanOuts.chunk('f1', 'main', 0)).toMatchObject({ status: 'done', recoveries: 1 });
    expect(await stores.fanOuts.counts('f1')).toMatchObject({
      items: { succeeded: 20, failed: 0, running: 0, pending: 0 },
    });
    await stores.close();
  }, 60_000);

  it('F4: a stale worker (frozen past its lease, the chunk re-claimed) is refused when it comes back; nothing is overwritten', async () => {
    const path = join(dir, 'stale-worker.db');
    const release = join(dir, 'stale-worker.release');
    const stores = openSqliteStores({ path });
    await create(stores.fanOuts, { main: stores.fanOuts }, planOf('f1', 20), 20);
    // The child freezes inside item 4's task, between two store calls, so it holds no write lock
    // while the supervisor and the fresh worker write (a SIGSTOP could land inside a transaction).
    const child = spawnScript('../fan-out/child.ts', ['worker', path, 'stale', '400', '4', release]);
    const lines = linesOf(child);
    await waitForLine(lines, (line) => line === 'frozen 4');
    const frozen = await stores.fanOuts.counts('f1');
    const { supervisor, close } = supervisorOf(stores);
    await until(async () => (await supervisor.tick()).fanOutChunks.length > 0, 10_000, 'the recovery');
    await close();
    const { worker, close: stop } = finisher(stores, 'fresh');
    await worker.start();
    await until(() => fanOutSettled('f1', { main: stores.fanOuts }, 20, 20), 20_000, 'the chunk done');
    await stop();
    const before = await itemRows('f1', { main: stores.fanOuts });
    writeFileSync(release, '');
    await waitForLine(lines, (line) => line === 'lost');
    child.kill('SIGTERM');
    const stats = JSON.parse((await waitForLine(lines, (line) => line.startsWith('stats '))).slice(6));
    await exited(child);
    expect(stats.lost).toBeGreaterThanOrEqual(1);
    const after = await itemRows('f1', { main: stores.fanOuts });
    expect(after).toEqual(before);
    expect(after.every((r) => r.status === 'succeeded')).toBe(true);
    expect(after.filter((r) => r.workerId === 'stale')).toHaveLength(frozen.items.succeeded);
    expect(stats.results).toBe(frozen.items.succeeded);
    await stores.close();
  }, 60_000);

  it('F2: a creator SIGKILLed between two seeds; the next creator finishes the same fan-out from its cursor', async () => {
    const path = join(dir, 'killed-creator.db');
    const child = spawnScript('../fan-out/child.ts', ['creator', path, 'f1', '95', '3']);
    const lines = linesOf(child);
    const exit = exited(child);
    await waitForLine(lines, (line) => line === 'page 3');
    child.kill('SIGKILL');
    expect((await exit).signal).toBe('SIGKILL');
    const stores = openSqliteStores({ path });
    // Seeds go two chunks per transaction: chunks 0 and 1 are seeded and counted; chunk 2 was
    // read with the hanging chunk 3, in a batch never written.
    expect(await stores.fanOuts.get('f1')).toMatchObject({
      status: 'creating',
      seededChunks: 2,
      seededItems: 20,
    });
    expect((await stores.fanOuts.items('f1')).map((item) => item.index)).toEqual(
      Array.from({ length: 20 }, (_, i) => i),
    );
    expect((await stores.outbox.list({ limit: 100 })).length).toBe(0);
    const row = await create(stores.fanOuts, { main: stores.fanOuts }, planOf('f1', 10), 95);
    expect(row).toMatchObject({ status: 'dispatched', total: 95, seededChunks: 10 });
    const rows = await itemRows('f1', { main: stores.fanOuts });
    expect(rows.map((r) => r.index)).toEqual(Array.from({ length: 95 }, (_, i) => i));
    const messages = await stores.outbox.list({ limit: 100 });
    expect(messages.map((m) => JSON.parse(m.payload).chunkId).sort((a, b) => a - b)).toEqual([
      0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
    ]);
    expect((await stores.fanOuts.counts('f1')).chunks.open).toBe(10);
    await stores.close();
  }, 60_000);
});
