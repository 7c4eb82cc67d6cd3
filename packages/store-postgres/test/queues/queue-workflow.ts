/**
 * The queue tests' workflow, queues and settings, shared by the test and its node processes.
 * The step records itself in `q_active` while it runs (deleted when it ends) and its start in
 * `q_starts`, both with the node's pid: the test samples `q_active` of live pids continuously
 * for the global limit, and reads `q_starts` for the rate windows, the order of starts between
 * partition keys and the priority order.
 */
import { defineQueue, defineSchedule, defineWorkflow } from '@skein/workflow-runtime';
import { z } from 'zod';

/** Slot and execution lease TTL of every node: short, so a killed node's slots lapse fast. */
export const LEASE_TTL_MS = 1_500;
/** Supervisor tick interval of every node. */
export const TICK_MS = 50;

/** A global limit well below what the nodes could run together (3 nodes × 3). */
export const limited = defineQueue({ name: 'limited', concurrency: 4, workerConcurrency: 3 });
/** A queue of its own, beside a backlog in `limited`. */
export const urgent = defineQueue({ name: 'urgent', concurrency: 2 });
/** One slot for the whole queue: the nappers' steps, before and after their sleeps, run one at a time. */
export const single = defineQueue({ name: 'single', concurrency: 1 });
/** A rate limit across every node; each node holds at most 2 slots, so several nodes share a window. */
/** 100 and more partition keys under one combined limit, one slot per key: round-robin between keys. */
export const shared = defineQueue({ name: 'shared', concurrency: 6, partition: { concurrency: 1 } });
/** One slot, handed out by priority (lower first). */
export const ranked = defineQueue({ name: 'ranked', concurrency: 1, priority: true });
export const rated = defineQueue({
  name: 'rated',
  workerConcurrency: 2,
  rateLimit: { limit: 5, periodMs: 1_000 },
});

export const CREATE_TABLES = `
CREATE TABLE q_active (execution_id text NOT NULL, pid integer NOT NULL, token text PRIMARY KEY);
CREATE TABLE q_starts (execution_id text NOT NULL, pid integer NOT NULL, queue text NOT NULL,
  at_ms bigint NOT NULL DEFAULT (extract(epoch FROM clock_timestamp()) * 1000)::bigint);`;

/** What the step does around its pause: `enter` before, `leave` after. */
export interface StepProbe {
  enter(executionId: string, queue: string, token: string): Promise<void>;
  leave(token: string): Promise<void>;
}

/** The workflow: one step that holds its place in `q_active` for `ms`. */
export function queueWorkflow(probe: StepProbe) {
  return defineWorkflow({
    name: 'q-work',
    input: z.object({ queue: z.string(), ms: z.number().int().nonnegative() }),
    async run(ctx, input) {
      return ctx.step('work', async ({ executionId, attempt }) => {
        const token = `${executionId}:${attempt}:${process.pid}:${Math.random()}`;
        await probe.enter(executionId, input.queue, token);
        await new Promise((resolve) => setTimeout(resolve, input.ms));
        await probe.leave(token);
        return process.pid;
      });
    },
  });
}

/** A step, a sleep of `napMs`, a step: each step holds its place in `q_active` for `ms`. */
export function napWorkflow(probe: StepProbe) {
  const hold = (queue: string, ms: number) => async (info: { executionId: string; attempt: number }) => {
    const token = `${info.executionId}:${info.attempt}:${process.pid}:${Math.random()}`;
    await probe.enter(info.executionId, queue, token);
    await new Promise((resolve) => setTimeout(resolve, ms));
    await probe.leave(token);
  };
  return defineWorkflow({
    name: 'q-nap',
    input: z.object({ ms: z.number().int().nonnegative(), napMs: z.number().int().nonnegative() }),
    async run(ctx, input) {
      await ctx.step('before', hold('single', input.ms));
      await ctx.sleep('nap', input.napMs);
      await ctx.step('after', hold('single', input.ms));
      return process.pid;
    },
  });
}

/** A schedule every 300 ms that runs every due time, even alongside the last (the nodes' `schedule` mode). */
export function tickerSchedule(workflow: ReturnType<typeof queueWorkflow>) {
  return defineSchedule({
    name: 'ticker',
    everyMs: 300,
    workflow,
    input: { queue: 'ticker', ms: 20 },
    overlap: 'allow',
    catchUp: 'all',
  });
}
