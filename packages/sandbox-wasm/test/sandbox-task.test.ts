/**
 * A sandboxed task (`defineTask({ sandbox: { component, limits, pool } })`) in a fan-out: every
 * item runs in the WebAssembly sandbox; a breached limit or the evaluator's refusal fails that
 * item at once with its sandbox code, never retried, and the worker goes on with the others.
 */
import { SandboxErrorCodes, SandboxPool } from '@skein/sandbox-wasm';
import { FanOutWorker, StoreTransport } from '@skein/worker-runtime-local';
import { defineTask, openMemoryStores } from '@skein/workflow-runtime';
import { createFanOut, fanOutSettled, summarizeFanOut } from '@skein/workflow-runtime/internal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { testEvaluator } from './support/pool.js';

const pool = new SandboxPool({ size: 1 });
beforeAll(async () => pool.warm(await testEvaluator()), 120_000);
afterAll(() => pool.close());

describe('a sandboxed task in a fan-out', () => {
  it('scores every case in the sandbox; a fuel breach and a refusal fail their item once, with their codes', async () => {
    const score = defineTask({
      name: 'sandboxed-score',
      input: z.object({
        text: z.string().optional(),
        loop: z.boolean().optional(),
        refuse: z.string().optional(),
      }),
      output: z.object({ score: z.number() }),
      retry: { maxAttempts: 3, initialMs: 10 },
      sandbox: { component: await testEvaluator(), pool, limits: { fuel: 5_000_000, timeoutMs: 30_000 } },
    });
    const stores = openMemoryStores();
    const cases = Array.from({ length: 12 }, (_, i) =>
      i === 5 ? { loop: true } : i === 7 ? { refuse: 'not a case' } : { text: 'x'.repeat(i) },
    );
    const shards = { main: stores.fanOuts };
    await createFanOut({
      home: stores.fanOuts,
      shards,
      plan: {
        fanOutId: 'f1',
        executionId: 'e1',
        name: 'cases',
        task: score.name,
        taskVersion: 1,
        chunkSize: 4,
        shards: ['main'],
        required: true,
        maxAttempts: 3,
      },
      task: score,
      items: (from, limit) => cases.slice(from, from + limit),
      owner: 'test',
    });
    const transport = new StoreTransport({ stores, pollIntervalMs: 5 });
    const worker = new FanOutWorker({
      home: stores.fanOuts,
      shards,
      transport,
      tasks: [score],
      parallelism: 2,
    });
    await worker.start();
    try {
      const deadline = Date.now() + 60_000;
      while (!(await fanOutSettled('f1', shards, 12, 4))) {
        if (Date.now() > deadline) throw new Error('the fan-out did not settle');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      await worker.stop();
      await transport.close();
    }
    const items = await stores.fanOuts.items('f1');
    expect(items.filter((item) => item.status === 'succeeded')).toHaveLength(10);
    expect(JSON.parse(items[3]!.output!)).toEqual({ score: 3 });
    expect(items[5]).toMatchObject({ status: 'failed', failures: 1, attempt: 1 });
    expect(items[5]!.error).toContain(SandboxErrorCodes.FuelExhausted);
    expect(items[7]).toMatchObject({ status: 'failed', failures: 1, attempt: 1 });
    expect(items[7]!.error).toContain(SandboxErrorCodes.EvaluatorError);
    expect(items[7]!.error).toContain('not a case');
    const summary = await summarizeFanOut({ fanOutId: 'f1', shards, required: true, total: 12 });
    expect(summary).toMatchObject({ status: 'errored', succeeded: 10, failed: 2 });
    expect(summary.aggregate).toBeUndefined();
  }, 120_000);

  it('refuses a task with both run and sandbox, or a sandbox without a pool', async () => {
    const component = await testEvaluator();
    expect(() =>
      defineTask({
        name: 't',
        input: z.object({}),
        sandbox: { component, pool },
        async run() {
          return 1;
        },
      }),
    ).toThrow(/cannot be given with run/);
    expect(() =>
      defineTask({ name: 't', input: z.object({}), sandbox: { component, pool: {} as never } }),
    ).toThrow(/sandbox\.pool: must have invoke\(component, input, limits\)/);
  });
});
