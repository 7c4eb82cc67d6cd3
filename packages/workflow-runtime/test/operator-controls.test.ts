/**
 * Issue #23 item 8, adr/0067, on every store: `runtime.resume` re-drives a failed or
 * dead-lettered execution from its log under a new fence (`EXECUTION_REDRIVEN`; completed steps
 * are not run again, the failed step runs again with a fresh budget) and refuses any other
 * status writing nothing; `runtime.fork` starts a new execution that reuses the recorded calls
 * before a step, leaving the source untouched, and refuses an unknown step or an existing id
 * writing nothing; `result({ timeoutMs })` gives up with `ResultTimeoutError` and changes nothing.
 */
import {
  createClient,
  createRuntime,
  defineWorkflow,
  type Envelope,
  ExecutionAlreadyExistsError,
  ExecutionNotFoundError,
  ExecutionNotResumableError,
  ForkRefusedError,
  InvalidInputError,
  ResultTimeoutError,
  type Runtime,
  type Stores,
} from '@skein/workflow-runtime';
import { afterEach, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { realStores } from './support/real-stores.js';
import { until } from './support/stores.js';

function types(log: readonly Envelope[]): string[] {
  return log.map((event) => event.type);
}

/** L1, L3 and L6 as amended by adr/0067: dense seqs, fences never go back, nothing after an end but a resume. */
function assertLogShape(log: readonly Envelope[]): void {
  log.forEach((event, i) => {
    expect(event.seq).toBe(i);
    if (i === 0) return;
    const before = log[i - 1]!;
    expect(event.fence).toBeGreaterThanOrEqual(before.fence);
    if (
      ['EXECUTION_COMPLETED', 'EXECUTION_FAILED', 'EXECUTION_CANCELLED', 'EXECUTION_DEAD_LETTERED'].includes(
        before.type,
      )
    )
      expect(event.type).toBe('EXECUTION_REDRIVEN');
  });
}

describe.each(realStores)('operator controls (%s)', (_, openStores) => {
  const opened: { stores: Stores; runtimes: Runtime[] }[] = [];
  afterEach(async () => {
    for (const { stores, runtimes } of opened.splice(0)) {
      for (const runtime of runtimes) await runtime.close();
      await stores.close();
    }
  });

  /** reserve → charge (fails while `broken`, 2 attempts) → ship; counts every run of each step. */
  function order() {
    const runs = { reserve: 0, charge: 0, ship: 0 };
    const service = { broken: true };
    const workflow = defineWorkflow({
      name: 'order',
      input: z.object({ sku: z.string() }),
      signals: { go: z.literal(true) },
      async run(ctx, { sku }) {
        const hold = await ctx.step('reserve', () => `hold-${sku}-${++runs.reserve}`);
        const paid = await ctx.step(
          'charge',
          () => {
            runs.charge += 1;
            if (service.broken) throw new Error('card service down');
            return `paid-${hold}`;
          },
          { retry: { maxAttempts: 2, initialMs: 1, jitter: 0 } },
        );
        return ctx.step('ship', () => `${paid}-shipped-${++runs.ship}`);
      },
    });
    return { workflow, runs, service };
  }

  async function setUp(workflows: Parameters<typeof createRuntime>[0]['workflows']) {
    const stores = await openStores();
    const runtimes: Runtime[] = [];
    opened.push({ stores, runtimes });
    const open = () => {
      const runtime = createRuntime({ stores, workflows, maintenance: false });
      runtimes.push(runtime);
      return runtime;
    };
    return { stores, open };
  }

  async function failedOrder(id: string) {
    const o = order();
    const env = await setUp([o.workflow]);
    const runtime = env.open();
    const handle = await runtime.start(o.workflow, { sku: 'a' }, { executionId: id });
    await expect(handle.result()).rejects.toThrow(/card service down/);
    return { ...o, ...env, runtime, handle };
  }

  test('resume: the failed step runs again with a fresh budget, completed steps do not, and the log records it', async () => {
    const { runtime, runs, service, handle } = await failedOrder('o1');
    const before = await runtime.history('o1');
    expect(runs).toEqual({ reserve: 1, charge: 2, ship: 0 });
    service.broken = false;
    const resumed = await runtime.resume('o1', { reason: 'card service fixed' });
    expect(resumed).toMatchObject({
      executionId: 'o1',
      from: 'failed',
      reopened: [{ position: 1, name: 'charge' }],
    });
    expect(await handle.result()).toBe('paid-hold-a-1-shipped-1');
    expect(runs).toEqual({ reserve: 1, charge: 3, ship: 1 });
    const log = await runtime.history('o1');
    // The failed run's log is kept as it was; the resume follows its end.
    expect(log.slice(0, before.length)).toEqual(before);
    const redriven = log[before.length]!;
    expect(redriven.type).toBe('EXECUTION_REDRIVEN');
    expect(redriven.payload).toMatchObject({
      reason: 'card service fixed',
      from: 'failed',
      fence: resumed.fence,
    });
    // The run after it is under a new fence.
    expect(log[before.length + 1]!.fence).toBeGreaterThan(before.at(-1)!.fence);
    expect(types(log.slice(before.length))).toEqual([
      'EXECUTION_REDRIVEN',
      'EXECUTION_RECOVERED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'EXECUTION_COMPLETED',
    ]);
    // Attempts go on counting; the budget counts from the resume.
    expect(
      log.filter((e) => e.type === 'STEP_STARTED' && e.payload.name === 'charge').map((e) => e.payload),
    ).toMatchObject([{ attempt: 1 }, { attempt: 2 }, { attempt: 3 }]);
    assertLogShape(log);
    // A replay in a fresh runtime gives the same end and runs nothing.
    expect(await runtime.loadState('o1')).toMatchObject({
      status: 'completed',
      output: 'paid-hold-a-1-shipped-1',
    });
    expect(runs).toEqual({ reserve: 1, charge: 3, ship: 1 });
  });

  test('resume: a step still failing fails the execution again after a full fresh budget', async () => {
    const { runtime, runs, handle } = await failedOrder('o2');
    await runtime.resume('o2');
    await expect(handle.result()).rejects.toThrow(/step "charge" failed after 4 attempts/);
    expect(runs.charge).toBe(4);
    const log = await runtime.history('o2');
    expect(types(log).filter((t) => t === 'EXECUTION_FAILED')).toHaveLength(2);
    assertLogShape(log);
  });

  test('resume refuses a completed, suspended or unknown execution, and bad input, writing nothing', async () => {
    const o = order();
    o.service.broken = false;
    const waiting = defineWorkflow({
      name: 'waiting',
      input: z.null(),
      signals: { go: z.literal(true) },
      async run(ctx) {
        await ctx.waitForSignal('go');
        return 'went';
      },
    });
    const { open } = await setUp([o.workflow, waiting]);
    const runtime = open();
    await (await runtime.start(o.workflow, { sku: 'b' }, { executionId: 'done' })).result();
    await runtime.start(waiting, null, { executionId: 'idle' });
    await until(async () => (await runtime.loadState('idle'))?.status === 'suspended');
    for (const [id, status] of [
      ['done', 'completed'],
      ['idle', 'suspended'],
    ] as const) {
      const length = (await runtime.history(id)).length;
      const refusal = runtime.resume(id);
      await expect(refusal).rejects.toThrow(ExecutionNotResumableError);
      await expect(refusal).rejects.toMatchObject({ code: 'EXECUTION_NOT_RESUMABLE', status });
      expect((await runtime.history(id)).length).toBe(length);
    }
    await expect(runtime.resume('nobody')).rejects.toThrow(ExecutionNotFoundError);
    await expect(runtime.resume('')).rejects.toThrow(InvalidInputError);
    await expect(runtime.resume('done', { reason: '' } as never)).rejects.toThrow(/reason/);
  });

  test('resume of a resumed execution is refused: one resume wins', async () => {
    const { runtime, handle } = await failedOrder('o3');
    const results = await Promise.allSettled([runtime.resume('o3'), runtime.resume('o3')]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(lost.reason).toBeInstanceOf(ExecutionNotResumableError);
    await expect(handle.result()).rejects.toThrow(/step "charge" failed after 4 attempts/);
    expect(types(await runtime.history('o3')).filter((t) => t === 'EXECUTION_REDRIVEN')).toHaveLength(1);
  });

  test('resume of a dead-lettered execution: it replays and waits again where it stood', async () => {
    const waiting = defineWorkflow({
      name: 'waiting',
      input: z.null(),
      signals: { go: z.literal(true) },
      async run(ctx) {
        const at = await ctx.step('before', () => 'before');
        await ctx.waitForSignal('go');
        return `${at}-went`;
      },
    });
    const { open } = await setUp([waiting]);
    const runtime = open();
    const handle = await runtime.start(waiting, null, { executionId: 'dl' });
    await until(async () => (await runtime.loadState('dl'))?.status === 'suspended');
    expect(await runtime.deadLetter('dl', 'operator: poison')).toBe(true);
    expect(await runtime.resume('dl')).toMatchObject({ from: 'dead_lettered', reopened: [] });
    await until(async () => (await runtime.loadState('dl'))?.status === 'suspended');
    await runtime.signal('dl', 'go', true);
    expect(await handle.result()).toBe('before-went');
    assertLogShape(await runtime.history('dl'));
  });

  test('resume leaves a failure the body caught and went past as it is', async () => {
    let must = 0;
    let optional = 0;
    const fixed = { now: false };
    const careful = defineWorkflow({
      name: 'careful',
      input: z.null(),
      async run(ctx) {
        const extra = await ctx
          .step('optional', () => {
            optional += 1;
            throw new Error('optional failed');
          })
          .catch(() => 'skipped');
        return ctx.step('must', () => {
          must += 1;
          if (!fixed.now) throw new Error('must failed');
          return `${extra}-done`;
        });
      },
    });
    const { open } = await setUp([careful]);
    const runtime = open();
    const handle = await runtime.start(careful, null, { executionId: 'cf' });
    await expect(handle.result()).rejects.toThrow(/must failed/);
    fixed.now = true;
    expect((await runtime.resume('cf')).reopened).toEqual([{ position: 1, name: 'must' }]);
    expect(await handle.result()).toBe('skipped-done');
    expect({ optional, must }).toEqual({ optional: 1, must: 2 });
  });

  test('client.resume records the resume; a node takes it over and re-drives it', async () => {
    const { runtime, stores, runs, service, handle } = await failedOrder('o4');
    service.broken = false;
    const client = createClient({ stores });
    expect(await client.resume('o4')).toMatchObject({ from: 'failed' });
    expect((await runtime.loadState('o4'))?.status).toBe('running');
    // Running with no holder: what recovery does once the lease lapses.
    expect(await runtime.execute({ executionId: 'o4', workflow: 'order' })).toMatchObject({
      status: 'completed',
    });
    expect(await handle.result()).toBe('paid-hold-a-1-shipped-1');
    expect(runs).toEqual({ reserve: 1, charge: 3, ship: 1 });
    await client.close();
  });

  test('fork: a new execution reuses the outputs before fromStep and runs on; the source is untouched', async () => {
    const o = order();
    o.service.broken = false;
    const { open } = await setUp([o.workflow]);
    const runtime = open();
    await (await runtime.start(o.workflow, { sku: 'f' }, { executionId: 'src' })).result();
    const source = await runtime.history('src');
    const fork = await runtime.fork('src', { fromStep: 'charge', executionId: 'src-fork' });
    expect(fork.executionId).toBe('src-fork');
    expect(await fork.result()).toBe('paid-hold-f-1-shipped-2');
    expect(o.runs).toEqual({ reserve: 1, charge: 2, ship: 2 });
    expect(await runtime.history('src')).toEqual(source);
    const log = await runtime.history('src-fork');
    expect(log[0]!.payload).toMatchObject({
      workflow: 'order',
      input: { sku: 'f' },
      forkedFrom: { executionId: 'src', fromStep: 'charge', position: 1 },
    });
    // The reserve step's record, copied; nothing of the source's charge or ship.
    expect(types(log).slice(0, 3)).toEqual(['EXECUTION_STARTED', 'STEP_STARTED', 'STEP_COMPLETED']);
    expect(log[2]!.payload).toMatchObject({ name: 'reserve', output: 'hold-f-1' });
    assertLogShape(log);
  });

  test('fork of a failed execution from its failing step, with the fault fixed, completes', async () => {
    const { runtime, runs, service } = await failedOrder('o5');
    service.broken = false;
    const fork = await runtime.fork('o5', { fromStep: 'charge' });
    expect(fork.executionId).not.toBe('o5');
    expect(await fork.result()).toBe('paid-hold-a-1-shipped-1');
    expect(runs).toEqual({ reserve: 1, charge: 3, ship: 1 });
    expect((await runtime.loadState('o5'))?.status).toBe('failed');
  });

  test('fork refuses an unknown step, an existing target, an unknown source and bad options, writing nothing', async () => {
    const o = order();
    o.service.broken = false;
    const { open, stores } = await setUp([o.workflow]);
    const runtime = open();
    await (await runtime.start(o.workflow, { sku: 'g' }, { executionId: 'src' })).result();
    await (await runtime.start(o.workflow, { sku: 'h' }, { executionId: 'taken' })).result();
    const taken = await runtime.history('taken');
    const unknown = runtime.fork('src', { fromStep: 'refund', executionId: 'new-1' });
    await expect(unknown).rejects.toThrow(ForkRefusedError);
    await expect(unknown).rejects.toThrow(/no step of that name.*"reserve", "charge", "ship"/);
    await expect(runtime.fork('src', { fromStep: 'charge', executionId: 'taken' })).rejects.toThrow(
      ExecutionAlreadyExistsError,
    );
    expect(await runtime.history('taken')).toEqual(taken);
    await expect(runtime.fork('nobody', { fromStep: 'charge' })).rejects.toThrow(ExecutionNotFoundError);
    await expect(runtime.fork('src', { fromStep: '' })).rejects.toThrow(InvalidInputError);
    await expect(runtime.fork('src', { fromStep: 'charge', executionId: 7 } as never)).rejects.toThrow(
      /options\.executionId/,
    );
    expect(await stores.events.getExecution('new-1')).toBeNull();
    expect((await runtime.list()).items.map((i) => i.executionId).sort()).toEqual(['src', 'taken']);
  });

  test('fork refuses a step with an unsettled call before it', async () => {
    const waiting = defineWorkflow({
      name: 'waiting',
      input: z.null(),
      signals: { go: z.literal(true) },
      async run(ctx) {
        await ctx.step('first', () => 1);
        await Promise.all([ctx.waitForSignal('go'), ctx.step('second', () => 2)]);
        return 'done';
      },
    });
    const { open } = await setUp([waiting]);
    const runtime = open();
    await runtime.start(waiting, null, { executionId: 'w' });
    await until(async () => (await runtime.loadState('w'))?.status === 'suspended');
    await expect(runtime.fork('w', { fromStep: 'second', executionId: 'w2' })).rejects.toThrow(
      /call 1 before it has not settled \(nothing recorded for it\)/,
    );
    const fork = await runtime.fork('w', { fromStep: 'first', executionId: 'w3' });
    await until(async () => (await fork.state())?.status === 'suspended');
  });

  test('result({ timeoutMs }) rejects with ResultTimeoutError and changes nothing; the execution goes on', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = defineWorkflow({
      name: 'slow',
      input: z.null(),
      signals: { go: z.literal(true) },
      async run(ctx) {
        await ctx.step('hold', () => held);
        await ctx.waitForSignal('go');
        return 'finished';
      },
    });
    const { open } = await setUp([slow]);
    const runtime = open();
    const handle = await runtime.start(slow, null, { executionId: 's' });
    // A step running in this very runtime: the wait gives up all the same.
    const started = Date.now();
    const running = handle.result({ timeoutMs: 100 });
    await expect(running).rejects.toThrow(ResultTimeoutError);
    await expect(running).rejects.toMatchObject({
      code: 'RESULT_TIMEOUT',
      executionId: 's',
      status: 'running',
      timeoutMs: 100,
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    release();
    await until(async () => (await runtime.loadState('s'))?.status === 'suspended');
    const length = (await runtime.history('s')).length;
    await expect(runtime.result('s', { timeoutMs: 50 })).rejects.toMatchObject({ status: 'suspended' });
    expect((await runtime.history('s')).length).toBe(length);
    await runtime.signal('s', 'go', true);
    expect(await handle.result({ timeoutMs: 10_000 })).toBe('finished');
    await expect(handle.result({ timeoutMs: -1 })).rejects.toThrow(/options\.timeoutMs/);
  });
});
