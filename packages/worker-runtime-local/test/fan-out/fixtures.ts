/** What the fan-out tests share: a task, a plan, creating a fan-out on stores, and reading it back. */
import { defineTask, type FanOutStore, NonRetryableError } from '@skein/workflow-runtime';
import { createFanOut, itemsInOrder } from '@skein/workflow-runtime/internal';
import type { FanOutPlan } from '@skein/workflow-runtime/spi';
import { z } from 'zod';

/** A trivial task: the score of case `i` is `i * 2`; `fail` cases fail for good, `flaky` ones on their first attempt. */
export const score = defineTask({
  name: 'score',
  input: z.object({ i: z.number().int(), kind: z.enum(['ok', 'flaky', 'fail', 'slow']).default('ok') }),
  output: z.object({ score: z.number() }),
  retry: { maxAttempts: 3, initialMs: 200, maxMs: 1_000, jitter: 0 },
  async run(input, info) {
    if (input.kind === 'fail') throw new NonRetryableError(`case ${input.i} is broken`);
    if (input.kind === 'flaky' && info.attempt === 1) throw new Error(`case ${input.i} flaked`);
    if (input.kind === 'slow') await new Promise((resolve) => setTimeout(resolve, 50));
    return { score: input.i * 2 };
  },
});

/** A plan of `fanOutId` over `shards` for the task `score`. */
export function planOf(
  fanOutId: string,
  chunkSize: number,
  shards: readonly string[] = ['main'],
): FanOutPlan {
  return {
    fanOutId,
    executionId: `exec-${fanOutId}`,
    name: 'cases',
    task: score.name,
    taskVersion: score.version,
    chunkSize,
    shards,
    required: true,
    maxAttempts: score.retry.maxAttempts,
  };
}

/** Cases `0 … total - 1`, `kind(i)` of each (default: ok). */
export function casesOf(total: number, kind: (i: number) => 'ok' | 'flaky' | 'fail' | 'slow' = () => 'ok') {
  return (from: number, limit: number) =>
    Array.from({ length: Math.max(0, Math.min(limit, total - from)) }, (_, k) => ({
      i: from + k,
      kind: kind(from + k),
    }));
}

/** Create and dispatch a fan-out of `total` cases. */
export function create(
  home: FanOutStore,
  shards: Readonly<Record<string, FanOutStore>>,
  plan: FanOutPlan,
  total: number,
  kind?: (i: number) => 'ok' | 'flaky' | 'fail' | 'slow',
) {
  return createFanOut({
    home,
    shards,
    plan,
    task: score,
    items: casesOf(total, kind),
    owner: 'test',
    leaseMs: 5_000,
  });
}

/** Resolves once `check` is true, polling; rejects after `timeoutMs`. */
export async function until(
  check: () => Promise<boolean> | boolean,
  timeoutMs = 30_000,
  what = 'a condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Every item of a fan-out, in index order, as `[index, status, attempt]`. */
export async function itemRows(fanOutId: string, shards: Readonly<Record<string, FanOutStore>>) {
  const rows: {
    index: number;
    status: string;
    attempt: number;
    output: string | null;
    workerId: string | null;
  }[] = [];
  for await (const item of itemsInOrder(fanOutId, shards, 500)) rows.push(item);
  return rows;
}
