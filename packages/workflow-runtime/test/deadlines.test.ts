/**
 * Issue 23.6, adr/0065: `start(…, { timeoutMs | deadline })` and `enqueue` record a deadline in
 * seq 0 with a timer row of its own, written before seq 0. At the deadline the execution is
 * cancelled as `runtime.cancel` does (its cleanup runs), with `DeadlineExceededError` (code
 * `DEADLINE_EXCEEDED`), whether it sleeps, waits for a signal or runs a long step, and after a
 * restart too. Bad options are refused before anything is written.
 */
import {
  CancelledError,
  ChildFailedError,
  createRuntime,
  DeadlineExceededError,
  defineWorkflow,
  ErrorCodes,
  ExecutionFailedError,
  InvalidInputError,
  type Runtime,
  type RuntimeOptions,
  type Stores,
} from '@skein/workflow-runtime';
import { afterEach, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { realStores } from './support/real-stores.js';

async function until(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function waiter(seen: unknown[], cleaned: string[]) {
  return defineWorkflow({
    name: 'waiter',
    input: z.object({ how: z.enum(['sleep', 'signal', 'step', 'quick']) }),
    signals: { go: z.null() },
    async run(ctx, { how }) {
      try {
        if (how === 'sleep') await ctx.sleep('long', 3_600_000);
        if (how === 'signal') await ctx.waitForSignal('go');
        if (how === 'step')
          await ctx.step(
            'long',
            (info) =>
              new Promise<string>((_, reject) => {
                info.signal.addEventListener('abort', () => reject(info.signal.reason));
              }),
          );
        return 'done';
      } catch (error) {
        seen.push(error);
        throw error;
      } finally {
        await ctx.step('cleanup', () => cleaned.push('cleanup'));
      }
    },
  });
}

describe.each(realStores)('deadlines (%s store)', (_, openStores) => {
  const opened: Stores[] = [];
  const runtimes: Runtime[] = [];
  const backgroundErrors: unknown[] = [];
  afterEach(async () => {
    await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
    await Promise.all(opened.splice(0).map((stores) => stores.close()));
    backgroundErrors.length = 0;
  });
  async function storesOf(): Promise<Stores> {
    const stores = await openStores();
    opened.push(stores);
    return stores;
  }
  function runtimeOf(options: RuntimeOptions): Runtime {
    const runtime = createRuntime({ onError: (error) => backgroundErrors.push(error), ...options });
    runtimes.push(runtime);
    return runtime;
  }

  async function expectDeadlineEnd(runtime: Runtime, stores: Stores, id: string, at: number) {
    const failure = await runtime.result(id).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ExecutionFailedError);
    const cause = (failure as ExecutionFailedError).cause;
    expect(cause).toBeInstanceOf(DeadlineExceededError);
    expect(cause).toBeInstanceOf(CancelledError);
    expect((cause as DeadlineExceededError).code).toBe(ErrorCodes.DeadlineExceeded);
    expect((cause as DeadlineExceededError).deadline).toBe(at);
    const log = await runtime.history(id);
    const requested = log.find((event) => event.type === 'CANCEL_REQUESTED');
    expect(requested?.type === 'CANCEL_REQUESTED' && requested.payload).toMatchObject({
      deadline: at,
      reason: expect.stringContaining('DEADLINE_EXCEEDED'),
    });
    expect(log.at(-1)?.type).toBe('EXECUTION_CANCELLED');
    await until(async () => (await stores.timers.forExecution(id)).length === 0);
  }

  test.each(['sleep', 'signal', 'step'] as const)(
    'a body that waits in %s is cancelled at its timeoutMs: DeadlineExceededError, cleanup runs, the row goes',
    async (how) => {
      const stores = await storesOf();
      const seen: unknown[] = [];
      const cleaned: string[] = [];
      const workflow = waiter(seen, cleaned);
      const runtime = runtimeOf({ stores, workflows: [workflow] });
      const startedAt = Date.now();
      await runtime.start(workflow, { how }, { executionId: `d-${how}`, timeoutMs: 300 });
      const [first] = await runtime.history(`d-${how}`);
      const deadline = first?.type === 'EXECUTION_STARTED' ? first.payload.deadline : undefined;
      expect(deadline?.at).toBeGreaterThanOrEqual(startedAt + 300);
      // The row exists (it was written before seq 0).
      expect((await stores.timers.forExecution(`d-${how}`)).map((t) => t.timerId)).toContain(
        deadline?.timerId,
      );
      await expectDeadlineEnd(runtime, stores, `d-${how}`, deadline!.at);
      expect(Date.now()).toBeGreaterThanOrEqual(deadline!.at);
      // A step in flight sees the abort in the run the cancellation fenced out, then the replay
      // throws at the same call; a waiting body sees it once.
      expect(seen).toHaveLength(how === 'step' ? 2 : 1);
      expect(seen.filter((error) => error instanceof DeadlineExceededError)).toHaveLength(1);
      expect(cleaned).toEqual(['cleanup']);
    },
  );

  test('the deadline survives a restart: a runtime that never ran the body cancels it at the deadline', async () => {
    const stores = await storesOf();
    const seen: unknown[] = [];
    const cleaned: string[] = [];
    const workflow = waiter(seen, cleaned);
    // The first process starts it and goes away before the deadline (nothing of it stays in memory).
    const first = runtimeOf({ stores, workflows: [workflow], maintenance: false });
    const deadline = new Date(Date.now() + 400);
    await first.start(workflow, { how: 'signal' }, { executionId: 'd-restart', deadline });
    await until(async () => (await first.loadState('d-restart'))?.status === 'suspended');
    await first.close();
    // A fresh process over the same stores: its maintenance fires the row.
    const second = runtimeOf({ stores, workflows: [workflow], maintenance: { intervalMs: 50 } });
    await expectDeadlineEnd(second, stores, 'd-restart', deadline.getTime());
    expect(cleaned).toEqual(['cleanup']);
  });

  test('an enqueued execution with a deadline that nobody claimed in time is cancelled when it passes', async () => {
    const stores = await storesOf();
    const workflow = waiter([], []);
    const client = runtimeOf({ stores, workflows: [workflow], maintenance: false });
    await client.enqueue(workflow, { how: 'quick' }, { executionId: 'd-enq', timeoutMs: 1 });
    const [first] = await client.history('d-enq');
    const at = first?.type === 'EXECUTION_STARTED' ? first.payload.deadline?.at : undefined;
    await new Promise((resolve) => setTimeout(resolve, 30));
    const node = runtimeOf({ stores, workflows: [workflow], maintenance: { intervalMs: 50 } });
    await expectDeadlineEnd(node, stores, 'd-enq', at!);
  });

  test('an execution that ends before its deadline deletes the row; the deadline never fires', async () => {
    const stores = await storesOf();
    const workflow = waiter([], []);
    const runtime = runtimeOf({ stores, workflows: [workflow], maintenance: { intervalMs: 50 } });
    await runtime.start(workflow, { how: 'quick' }, { executionId: 'd-quick', timeoutMs: 200 });
    expect(await runtime.result('d-quick')).toBe('done');
    await until(async () => (await stores.timers.forExecution('d-quick')).length === 0);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const log = await runtime.history('d-quick');
    expect(log.map((event) => event.type)).not.toContain('CANCEL_REQUESTED');
    expect(log.at(-1)?.type).toBe('EXECUTION_COMPLETED');
  });

  test('L7: bad deadline options are refused before anything is written, naming the field', async () => {
    const stores = await storesOf();
    const workflow = waiter([], []);
    const runtime = runtimeOf({ stores, workflows: [workflow], maintenance: false });
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ timeoutMs: -1 }, /start options is invalid: timeoutMs: /],
      [{ timeoutMs: 0 }, /timeoutMs: ms must be >= 1/],
      [{ timeoutMs: '100' }, /timeoutMs: must be a finite number/],
      [{ timeoutMs: Number.NaN }, /timeoutMs/],
      [{ deadline: 'tomorrow' }, /deadline: must be a Date or ms since the epoch/],
      [
        { deadline: new Date(Number.NaN) },
        /deadline: must be a Date or ms since the epoch, got an invalid Date/,
      ],
      [{ timeoutMs: 10, deadline: Date.now() + 10 }, /deadline: give timeoutMs or deadline, not both/],
    ];
    for (const [options, message] of cases) {
      const start = runtime.start(workflow, { how: 'quick' }, { executionId: 'd-bad', ...options });
      await expect(start).rejects.toBeInstanceOf(InvalidInputError);
      await expect(
        runtime.start(workflow, { how: 'quick' }, { executionId: 'd-bad', ...options }),
      ).rejects.toThrow(message);
      await expect(
        runtime.enqueue(workflow, { how: 'quick' }, { executionId: 'd-bad', ...options }),
      ).rejects.toThrow(/enqueue options is invalid/);
    }
    // A bad input with a good deadline writes no row either.
    await expect(
      runtime.start(workflow, { how: 'nope' } as never, { executionId: 'd-bad', timeoutMs: 10 }),
    ).rejects.toBeInstanceOf(InvalidInputError);
    expect(await runtime.loadState('d-bad')).toBeNull();
    expect(await stores.timers.forExecution('d-bad')).toEqual([]);
  });

  test('a start of an id that exists keeps the first deadline and leaves no row of its own', async () => {
    const stores = await storesOf();
    const workflow = waiter([], []);
    const runtime = runtimeOf({ stores, workflows: [workflow], maintenance: false });
    await runtime.start(workflow, { how: 'signal' }, { executionId: 'd-twice', timeoutMs: 3_600_000 });
    await runtime.start(workflow, { how: 'signal' }, { executionId: 'd-twice', timeoutMs: 1 });
    const state = await runtime.loadState('d-twice');
    const rows = await stores.timers.forExecution('d-twice');
    expect(rows.map((row) => row.timerId)).toEqual([state?.deadline?.timerId]);
    expect(rows[0]?.dueAt).toBe(state?.deadline?.at);
  });

  function parentOf(workflow: ReturnType<typeof waiter>, childOptions: Record<string, unknown>) {
    return defineWorkflow({
      name: 'parent',
      input: z.object({}),
      async run(ctx) {
        try {
          return await ctx.child(workflow, { how: 'signal' }, { executionId: 'kid', ...childOptions });
        } catch (error) {
          if (error instanceof ChildFailedError) return `child ${error.status}`;
          return error instanceof InvalidInputError ? error.message : 'other';
        }
      },
    });
  }

  test('a child with timeoutMs is cancelled at its own deadline (its cleanup runs); the parent sees ChildFailedError', async () => {
    const stores = await storesOf();
    const seen: unknown[] = [];
    const cleaned: string[] = [];
    const workflow = waiter(seen, cleaned);
    const parent = parentOf(workflow, { timeoutMs: 300 });
    const runtime = runtimeOf({ stores, workflows: [workflow, parent] });
    const startedAt = Date.now();
    const handle = await runtime.start(parent, {}, { executionId: 'd-parent' });
    expect(await handle.result()).toBe('child cancelled');
    const [first] = await runtime.history('kid');
    const deadline = first?.type === 'EXECUTION_STARTED' ? first.payload.deadline : undefined;
    expect(first?.type === 'EXECUTION_STARTED' && first.payload.parentId).toBe('d-parent');
    expect(deadline?.at).toBeGreaterThanOrEqual(startedAt + 300);
    await expectDeadlineEnd(runtime, stores, 'kid', deadline!.at);
    expect(cleaned).toEqual(['cleanup']);
    // The parent itself has no deadline.
    expect((await runtime.loadState('d-parent'))?.deadline).toBeUndefined();
  });

  test("a child's deadline survives a restart of the process that started it", async () => {
    const stores = await storesOf();
    const cleaned: string[] = [];
    const workflow = waiter([], cleaned);
    const deadline = Date.now() + 400;
    const parent = parentOf(workflow, { deadline: new Date(deadline) });
    const first = runtimeOf({ stores, workflows: [workflow, parent], maintenance: false });
    await first.start(parent, {}, { executionId: 'd-parent-2' });
    await until(async () => (await first.loadState('kid'))?.status === 'suspended');
    await until(async () => (await first.loadState('d-parent-2'))?.status === 'suspended');
    await first.close();
    const second = runtimeOf({ stores, workflows: [workflow, parent], maintenance: { intervalMs: 50 } });
    await expectDeadlineEnd(second, stores, 'kid', deadline);
    expect(await second.result('d-parent-2')).toBe('child cancelled');
    expect(cleaned).toEqual(['cleanup']);
  });

  test('L7: a bad child deadline fails the ctx.child call before it takes a position or writes a child', async () => {
    const stores = await storesOf();
    const workflow = waiter([], []);
    const parent = parentOf(workflow, { timeoutMs: -5 });
    const runtime = runtimeOf({ stores, workflows: [workflow, parent], maintenance: false });
    await runtime.start(parent, {}, { executionId: 'd-parent-bad' });
    expect(await runtime.result('d-parent-bad')).toMatch(/^ctx\.child options is invalid: timeoutMs: /);
    expect(await runtime.loadState('kid')).toBeNull();
    expect(await stores.timers.forExecution('kid')).toEqual([]);
    const log = await runtime.history('d-parent-bad');
    expect(log.map((event) => event.type)).not.toContain('CHILD_STARTED');
  });

  test("L7: a child's input the schema refuses leaves no deadline row behind", async () => {
    const stores = await storesOf();
    const workflow = waiter([], []);
    const parent = defineWorkflow({
      name: 'parent',
      input: z.object({}),
      async run(ctx) {
        try {
          return await ctx.child(workflow, { how: 'nope' } as never, {
            executionId: 'kid',
            timeoutMs: 60_000,
          });
        } catch (error) {
          return error instanceof InvalidInputError ? error.message : 'other';
        }
      },
    });
    const runtime = runtimeOf({ stores, workflows: [workflow, parent], maintenance: false });
    await runtime.start(parent, {}, { executionId: 'd-parent-bad-input' });
    expect(await runtime.result('d-parent-bad-input')).toMatch(/input of workflow "waiter" is invalid/);
    expect(await runtime.loadState('kid')).toBeNull();
    expect(await stores.timers.forExecution('kid')).toEqual([]);
  });
});
