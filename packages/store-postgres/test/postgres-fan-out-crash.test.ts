/**
 * F3/F8 on PostgreSQL and the real RabbitMQ: a worker process SIGKILLed mid-chunk leaves its
 * broker delivery unacked and its chunk lease to expire; RabbitMQ redelivers, the leader's
 * tick recovers the chunk, and another worker finishes it: each item has exactly one accepted
 * result, the killed worker's persisted results stay, and the counts equal the plan.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { FanOutWorker, OutboxPublisher, Supervisor } from '@skein/worker-runtime-local';
import { createRuntime, defineTask } from '@skein/workflow-runtime';
import { createFanOut, fanOutSettled, HOME_SHARD, itemsInOrder } from '@skein/workflow-runtime/internal';
import { chunkReadyTopic } from '@skein/workflow-runtime/spi';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  AMQP_URL,
  connectTransport,
  deleteTopology,
  freshPrefix,
  whenAmqp,
} from '../../broker-amqp/test/support/amqp.js';
import { openTestStores, PG_URL, whenPostgres } from './support/pg.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const script = fileURLToPath(new URL('./fan-out/worker.ts', import.meta.url));

const fast = defineTask({
  name: 'score',
  input: z.object({ i: z.number().int() }),
  async run(input) {
    return { score: input.i };
  },
});

whenPostgres(() =>
  whenAmqp(() => {
    describe('fan-out crash on PostgreSQL and RabbitMQ', () => {
      it('F8: a worker SIGKILLed mid-chunk; the broker redelivers, the leader recovers, one result per item', async () => {
        const prefix = freshPrefix();
        const stores = await openTestStores({ poolSize: 8 });
        const transport = await connectTransport(prefix);
        const publisher = new OutboxPublisher({ stores, transport, pollIntervalMs: 20, onError: () => {} });
        const child = spawn(
          process.execPath,
          ['--import', 'tsx', script, PG_URL, stores.schema, AMQP_URL, prefix, 'doomed'],
          {
            cwd: root,
            env: { ...process.env, TSX_TSCONFIG_PATH: `${root}tsconfig.json` },
            stdio: ['ignore', 'pipe', 'inherit'],
          },
        );
        const exit = new Promise<NodeJS.Signals | null>((resolve) =>
          child.once('exit', (_code, signal) => resolve(signal)),
        );
        const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
        const waitFor = async (line: string) => {
          for (;;) {
            const next = await lines.next();
            if (next.done) throw new Error(`the worker ended before "${line}"`);
            if (next.value === line) return;
          }
        };
        const runtime = createRuntime({ stores, workflows: [], lease: { ttlMs: 500 } });
        const supervisor = new Supervisor({ runtime, stores, leaseTtlMs: 500, tickIntervalMs: 50 });
        let finisher: FanOutWorker | undefined;
        try {
          await waitFor('ready');
          publisher.start();
          const shards = { [HOME_SHARD]: stores.fanOuts };
          await createFanOut({
            home: stores.fanOuts,
            shards,
            plan: {
              fanOutId: 'f1',
              executionId: 'e1',
              name: 'cases',
              task: 'score',
              taskVersion: 1,
              chunkSize: 20,
              shards: [HOME_SHARD],
              required: true,
              maxAttempts: 3,
            },
            task: fast,
            items: (from, limit) =>
              Array.from({ length: Math.max(0, Math.min(limit, 20 - from)) }, (_, k) => ({ i: from + k })),
            owner: 'test',
          });
          await waitFor('started 8');
          child.kill('SIGKILL');
          expect(await exit).toBe('SIGKILL');
          const atKill = await stores.fanOuts.counts('f1');
          expect(atKill.items.running).toBeGreaterThan(0);
          const deadline = Date.now() + 20_000;
          let recovered = 0;
          while (recovered === 0) {
            if (Date.now() > deadline) throw new Error('the chunk was not recovered');
            recovered = (await supervisor.tick()).fanOutChunks.length;
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
          finisher = new FanOutWorker({
            stores,
            transport,
            tasks: [fast],
            workerId: 'finisher',
            leaseMs: 5_000,
          });
          await finisher.start();
          while (!(await fanOutSettled('f1', shards, 20, 20))) {
            if (Date.now() > deadline + 20_000) throw new Error('the chunk was not finished');
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
          const rows = [];
          for await (const item of itemsInOrder('f1', shards)) rows.push(item);
          expect(rows.map((r) => r.index)).toEqual(Array.from({ length: 20 }, (_, i) => i));
          expect(rows.every((r) => r.status === 'succeeded')).toBe(true);
          expect(rows.filter((r) => r.workerId === 'doomed')).toHaveLength(atKill.items.succeeded);
          expect(rows.filter((r) => r.workerId === 'finisher')).toHaveLength(20 - atKill.items.succeeded);
          expect(await stores.fanOuts.chunk('f1', HOME_SHARD, 0)).toMatchObject({
            status: 'done',
            recoveries: 1,
          });
        } finally {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
          await finisher?.stop();
          await supervisor.stop();
          await runtime.close();
          await publisher.stop();
          await transport.close();
          await stores.close();
          await deleteTopology(prefix, [chunkReadyTopic(HOME_SHARD)]);
        }
      }, 90_000);
    });
  }),
);
