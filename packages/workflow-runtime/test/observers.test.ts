/**
 * `RuntimeObserver`: observers hear what a runtime made durable (executions, steps that ran,
 * timers, signals, children, cancellations, dead letters), never what a replay skipped, never
 * payloads unless they ask, and an observer that throws never breaks a run.
 */
import { defineWorkflow, type RuntimeObserver } from '@skein/workflow-runtime';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { backings, deferred, harness, until } from './support/stores.js';

type Heard = [method: string, event: Record<string, unknown>];

/** An observer that keeps every notification, in order. */
function recorder(options: { payloads?: boolean } = {}): RuntimeObserver & { heard: Heard[] } {
  const heard: Heard[] = [];
  const methods = [
    'executionStarted',
    'executionRecovered',
    'executionResumed',
    'executionSuspended',
    'executionSettled',
    'executionRedriven',
    'cancelRequested',
    'stepStarted',
    'stepSettled',
    'timerScheduled',
    'timerFired',
    'signalReceived',
    'childStarted',
    'childSettled',
  ] as const;
  const observer: Record<string, unknown> = { heard, payloads: options.payloads };
  for (const method of methods)
    observer[method] = (event: Record<string, unknown>) => heard.push([method, event]);
  return observer as unknown as RuntimeObserver & { heard: Heard[] };
}

const summary = (heard: Heard[]) =>
  heard.map(
    ([method, e]) =>
      `${method}${e.name === undefined ? '' : ` ${String(e.name)}`}${e.attempt === undefined ? '' : `#${String(e.attempt)}`}${e.outcome === undefined ? '' : ` ${String(e.outcome)}`}${e.status === undefined ? '' : ` ${String(e.status)}`}`,
  );

describe.each(backings)('RuntimeObserver (%s store)', (_, open) => {
  const h = harness(open);

  const order = defineWorkflow({
    name: 'order',
    input: z.object({ sku: z.string() }),
    signals: { approve: z.boolean() },
    async run(ctx, input) {
      const hold = await ctx.step(
        'reserve',
        (info) => {
          if (info.attempt === 1) throw new Error('warehouse busy');
          return `hold-${input.sku}`;
        },
        { retry: { maxAttempts: 3, initialMs: 1, maxMs: 2 } },
      );
      await ctx.sleep('cool-off', 0);
      const ok = await ctx.waitForSignal('approve');
      return ok ? ctx.step('charge', () => `charged ${hold}`) : 'rejected';
    },
  });

  test('observers hear executions, each step attempt with its duration and outcome, timers and signals, in order, without payloads', async () => {
    const { stores } = h.open();
    const observer = recorder();
    const runtime = h.runtime({ stores, workflows: [order], observers: [observer] });
    const handle = await runtime.start(order, { sku: 'a' }, { executionId: 'o-1' });
    await until(async () => (await runtime.loadState('o-1'))?.awaiting !== undefined);
    await runtime.signal('o-1', 'approve', true);
    expect(await handle.result()).toBe('charged hold-a');
    const heard = summary(observer.heard);
    expect(heard[0]).toBe('executionStarted');
    expect(heard).toContain('stepStarted reserve#1');
    expect(heard).toContain('stepSettled reserve#1 retrying');
    expect(heard).toContain('stepSettled reserve#2 completed');
    expect(heard).toContain('timerScheduled cool-off');
    expect(heard).toContain('signalReceived approve');
    expect(heard).toContain('executionSuspended');
    expect(heard).toContain('executionResumed');
    expect(heard.at(-1)).toBe('executionSettled completed');
    expect(heard.indexOf('stepSettled reserve#1 retrying')).toBeLessThan(
      heard.indexOf('stepStarted reserve#2'),
    );
    const retry = observer.heard.find(([m, e]) => m === 'stepSettled' && e.outcome === 'retrying')![1];
    expect(retry).toMatchObject({
      executionId: 'o-1',
      workflow: 'order',
      version: 1,
      position: 0,
      error: { name: 'Error', message: 'warehouse busy' },
    });
    expect(typeof retry.retryAt).toBe('number');
    expect(typeof retry.durationMs).toBe('number');
    const settled = observer.heard.at(-1)![1];
    expect(settled.durationMs).toBe((settled.at as number) - (settled.startedAt as number));
    // No payloads by default: no input, no output, no signal value anywhere.
    for (const [, event] of observer.heard) {
      expect(event).not.toHaveProperty('input');
      expect(event).not.toHaveProperty('output');
      expect(event).not.toHaveProperty('payload');
    }
  });

  test('with payloads: true an observer gets inputs, outputs and signal values', async () => {
    const { stores } = h.open();
    const observer = recorder({ payloads: true });
    const runtime = h.runtime({ stores, workflows: [order], observers: [observer] });
    const handle = await runtime.start(order, { sku: 'b' }, { executionId: 'o-2' });
    await until(async () => (await runtime.loadState('o-2'))?.awaiting !== undefined);
    await runtime.signal('o-2', 'approve', false);
    await handle.result();
    const by = (m: string) => observer.heard.filter(([method]) => method === m).map(([, e]) => e);
    expect(by('executionStarted')[0]).toMatchObject({ input: { sku: 'b' } });
    expect(by('stepSettled').find((e) => e.outcome === 'completed')).toMatchObject({ output: 'hold-b' });
    expect(by('signalReceived')[0]).toMatchObject({ payload: false });
    expect(by('executionSettled')[0]).toMatchObject({ status: 'completed', output: 'rejected' });
  });

  test('a recovery reports only what it ran: replayed steps are never reported', async () => {
    const backing = h.open();
    const hang = deferred();
    const two = defineWorkflow({
      name: 'two',
      input: z.object({}),
      async run(ctx) {
        await ctx.step('first', () => 1);
        return ctx.step('second', async () => {
          if (process.env.SKEIN_OBSERVER_TEST_SECOND !== 'free') await hang.promise;
          return 2;
        });
      },
    });
    const before = recorder();
    const crashed = h.runtime({ stores: backing.stores, workflows: [two], observers: [before] });
    await crashed.start(two, {}, { executionId: 't-1' });
    await until(() => before.heard.some(([m, e]) => m === 'stepStarted' && e.name === 'second'));
    // The first runtime is left hanging in "second", as a dead process would; another takes over.
    process.env.SKEIN_OBSERVER_TEST_SECOND = 'free';
    const after = recorder();
    const recovering = h.runtime({ stores: backing.reopen(), workflows: [two], observers: [after] });
    try {
      await recovering.execute({ executionId: 't-1', workflow: 'two' });
    } finally {
      delete process.env.SKEIN_OBSERVER_TEST_SECOND;
      hang.resolve();
    }
    expect(summary(after.heard)).toEqual([
      'executionRecovered',
      'stepStarted second#1',
      'stepSettled second#1 completed',
      'executionSettled completed',
    ]);
    expect(after.heard[0]![1].fence).toBeGreaterThan(before.heard[0]![1].fence as number);
  });

  test('an observer that throws or rejects never breaks a run; its error goes to onError', async () => {
    const { stores } = h.open();
    const errors: [unknown, string][] = [];
    const throwing: RuntimeObserver = {
      stepStarted: () => {
        throw new Error('observer bug');
      },
      executionSettled: async () => {
        throw new Error('exporter down');
      },
    };
    const good = recorder();
    const runtime = h.runtime({
      stores,
      workflows: [order],
      observers: [throwing, good],
      onError: (error, context) => errors.push([error, context]),
    });
    const handle = await runtime.start(order, { sku: 'c' }, { executionId: 'o-3' });
    await until(async () => (await runtime.loadState('o-3'))?.awaiting !== undefined);
    await runtime.signal('o-3', 'approve', true);
    expect(await handle.result()).toBe('charged hold-c');
    await until(() => errors.some(([, c]) => c === 'observer executionSettled'));
    expect(errors.filter(([, c]) => c === 'observer stepStarted').length).toBe(3);
    expect(summary(good.heard).at(-1)).toBe('executionSettled completed');
  });

  test('cancellations, children and dead letters are reported', async () => {
    const { stores } = h.open();
    const observer = recorder();
    const leaf = defineWorkflow({
      name: 'leaf',
      input: z.object({}),
      run: async (ctx) => ctx.step('x', () => 1),
    });
    const parent = defineWorkflow({
      name: 'parent',
      input: z.object({}),
      run: async (ctx) => (await ctx.child(leaf, {}, { executionId: 'leaf-1' })) + 1,
    });
    const runtime = h.runtime({ stores, workflows: [order, leaf, parent], observers: [observer] });
    await (await runtime.start(parent, {}, { executionId: 'p-1' })).result();
    await runtime.start(order, { sku: 'd' }, { executionId: 'o-4' });
    await until(async () => (await runtime.loadState('o-4'))?.awaiting !== undefined);
    await runtime.cancel('o-4', 'customer asked');
    await until(async () => (await runtime.loadState('o-4'))?.status === 'cancelled');
    await runtime.enqueue(order, { sku: 'e' }, { executionId: 'o-5' });
    await runtime.deadLetter('o-5', 'poison');
    const find = (m: string, id: string) =>
      observer.heard.find(([method, e]) => method === m && e.executionId === id)?.[1];
    expect(find('childStarted', 'p-1')).toMatchObject({ childId: 'leaf-1', childWorkflow: 'leaf' });
    expect(find('childSettled', 'p-1')).toMatchObject({ childId: 'leaf-1', status: 'completed' });
    expect(find('executionStarted', 'leaf-1')).toMatchObject({ parentId: 'p-1' });
    expect(find('cancelRequested', 'o-4')).toMatchObject({ reason: 'customer asked' });
    expect(find('executionSettled', 'o-4')).toMatchObject({ status: 'cancelled', reason: 'customer asked' });
    expect(find('executionSettled', 'o-5')).toMatchObject({
      status: 'dead_lettered',
      reason: 'poison',
      workflow: 'order',
      version: 1,
    });
  });

  test('an operator resume is reported, and the resumed run settles again with its resume count', async () => {
    const { stores } = h.open();
    const observer = recorder();
    let up = false;
    const pay = defineWorkflow({
      name: 'pay',
      input: z.object({}),
      async run(ctx) {
        await ctx.step('quote', () => 10);
        return ctx.step('charge', () => {
          if (!up) throw new Error('card service down');
          return 'paid';
        });
      },
    });
    const runtime = h.runtime({ stores, workflows: [pay], observers: [observer] });
    await expect((await runtime.start(pay, {}, { executionId: 'pay-1' })).result()).rejects.toThrow();
    up = true;
    const resumed = await runtime.resume('pay-1', { reason: 'card service fixed' });
    await expect(runtime.handle('pay-1').result()).resolves.toBe('paid');
    await until(() => observer.heard.filter(([m]) => m === 'executionSettled').length === 2);
    const heard = observer.heard.filter(([m]) => m === 'executionRedriven' || m === 'executionSettled');
    expect(heard.map(([m, e]) => `${m} ${String(e.status ?? e.from)}`)).toEqual([
      'executionSettled failed',
      'executionRedriven failed',
      'executionSettled completed',
    ]);
    expect(heard[0]![1].redriven).toBeUndefined();
    expect(heard[1]![1]).toMatchObject({
      executionId: 'pay-1',
      workflow: 'pay',
      reason: 'card service fixed',
      reopened: [{ position: 1, name: 'charge' }],
      count: 1,
      fence: resumed.fence,
    });
    expect(heard[2]![1]).toMatchObject({ redriven: { count: 1, at: heard[1]![1].at } });
  });
});
