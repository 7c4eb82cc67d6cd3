/**
 * Fan-out over PostgreSQL and the real RabbitMQ: a plan placed on two shards in two schemas,
 * one OutboxPublisher per schema, two FanOutWorkers with their own broker connections, and
 * every connection of the test closed twice mid-run. Each item has exactly one accepted
 * result and the counts equal the plan (F6, placement, both transports).
 */
import type { PostgresStores } from '@skein/store-postgres';
import { FanOutWorker, OutboxPublisher } from '@skein/worker-runtime-local';
import { defineTask, type FanOutStore } from '@skein/workflow-runtime';
import { createFanOut, fanOutSettled, itemsInOrder, summarizeFanOut } from '@skein/workflow-runtime/internal';
import { chunkReadyTopic } from '@skein/workflow-runtime/spi';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  closeConnectionsNamed,
  connectTransport,
  deleteTopology,
  freshPrefix,
  whenAmqp,
} from '../../broker-amqp/test/support/amqp.js';
import { openTestStores, whenPostgres } from './support/pg.js';

const score = defineTask({
  name: 'score',
  input: z.object({ i: z.number().int() }),
  output: z.object({ score: z.number() }),
  retry: { maxAttempts: 3, initialMs: 100, maxMs: 500, jitter: 0 },
  async run(input, info) {
    if (input.i % 97 === 0 && info.attempt === 1) throw new Error(`case ${input.i} flaked`);
    return { score: input.i };
  },
});

whenPostgres(() =>
  whenAmqp(() => {
    describe('fan-out over PostgreSQL and RabbitMQ', () => {
      it('two shards in two schemas, two workers, every broker connection closed twice mid-run: one result per item', async () => {
        const prefix = freshPrefix();
        const stores: PostgresStores[] = [];
        const closers: (() => Promise<void>)[] = [];
        try {
          for (let i = 0; i < 2; i += 1) stores.push(await openTestStores({ poolSize: 8 }));
          const [a, b] = stores as [PostgresStores, PostgresStores];
          const shards: Record<string, FanOutStore> = { a: a.fanOuts, b: b.fanOuts };
          for (const s of stores) {
            const transport = await connectTransport(prefix);
            const publisher = new OutboxPublisher({
              stores: s,
              transport,
              batchSize: 100,
              pollIntervalMs: 20,
              onError: () => {},
            });
            publisher.start();
            closers.push(async () => {
              await publisher.stop();
              await transport.close();
            });
          }
          const workers: FanOutWorker[] = [];
          for (const workerId of ['w1', 'w2']) {
            const transport = await connectTransport(prefix);
            const worker = new FanOutWorker({
              home: a.fanOuts,
              shards,
              transport,
              tasks: [score],
              workerId,
              maxInFlightChunks: 2,
              parallelism: 8,
              leaseMs: 5_000,
              onError: () => {},
            });
            await worker.start();
            workers.push(worker);
            closers.unshift(async () => {
              await worker.stop();
              await transport.close();
            });
          }
          const total = 3_000;
          const plan = {
            fanOutId: 'f1',
            executionId: 'exec-f1',
            name: 'cases',
            task: 'score',
            taskVersion: 1,
            chunkSize: 50,
            shards: ['a', 'b'],
            required: true,
            maxAttempts: 3,
          };
          await createFanOut({
            home: a.fanOuts,
            shards,
            plan,
            task: score,
            owner: 'test',
            items: (from, limit) =>
              Array.from({ length: Math.max(0, Math.min(limit, total - from)) }, (_, k) => ({ i: from + k })),
          });
          await new Promise((resolve) => setTimeout(resolve, 300));
          expect(await closeConnectionsNamed(`skeintest:${prefix}`)).toBeGreaterThan(0);
          await new Promise((resolve) => setTimeout(resolve, 700));
          await closeConnectionsNamed(`skeintest:${prefix}`);
          const deadline = Date.now() + 90_000;
          while (!(await fanOutSettled('f1', shards, total, 50))) {
            if (Date.now() > deadline)
              throw new Error(
                `not settled: ${JSON.stringify([await a.fanOuts.counts('f1'), await b.fanOuts.counts('f1')])}`,
              );
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
          const indexes: number[] = [];
          for await (const item of itemsInOrder('f1', shards)) {
            expect(item.status).toBe('succeeded');
            indexes.push(item.index);
          }
          expect(indexes).toEqual(Array.from({ length: total }, (_, i) => i));
          expect((await a.fanOuts.counts('f1')).chunks.done).toBe(30);
          expect((await b.fanOuts.counts('f1')).chunks.done).toBe(30);
          const summary = await summarizeFanOut({
            fanOutId: 'f1',
            shards,
            required: true,
            total,
            aggregate: { init: () => 0, add: (sum: number, r: { score: number }) => sum + r.score },
          });
          expect(summary).toMatchObject({
            status: 'complete',
            succeeded: total,
            aggregate: (total * (total - 1)) / 2,
          });
          // Every success once, and one failed attempt per flaky case (i % 97 === 0).
          expect(workers.reduce((n, w) => n + w.stats().results, 0)).toBe(total + Math.ceil(total / 97));
        } finally {
          for (const close of closers) await close().catch(() => undefined);
          for (const s of stores) await s.close();
          await deleteTopology(prefix, [chunkReadyTopic('a'), chunkReadyTopic('b')]);
        }
      }, 150_000);
    });
  }),
);
