/**
 * Issue #23, published events (adr/0050): `ctx.setEvent(key, value)` records the value in the
 * log before it resolves; `runtime.getEvent(id, key, { timeoutMs })` returns the latest one and
 * waits for the first. Replay writes nothing again. On every real store.
 */
import {
  createRuntime,
  defineWorkflow,
  ExecutionNotFoundError,
  InvalidInputError,
  type Runtime,
  type Stores,
} from '@skein/workflow-runtime';
import { afterEach, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { realStores } from './support/real-stores.js';
import { deferred, types, until } from './support/stores.js';

describe.each(realStores)('published events (%s store)', (_, openStores) => {
  const opened: Stores[] = [];
  const runtimes: Runtime[] = [];
  afterEach(async () => {
    await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
    await Promise.all(opened.splice(0).map((stores) => stores.close()));
  });

  async function runtimeOver(workflows: Parameters<typeof createRuntime>[0]['workflows']) {
    const stores = await openStores();
    opened.push(stores);
    const runtime = createRuntime({ stores, workflows, maintenance: false });
    runtimes.push(runtime);
    return { stores, runtime };
  }

  function progress(gate: Promise<void>) {
    return defineWorkflow({
      name: 'progress',
      input: z.object({ of: z.number() }),
      signals: { go: z.literal(true) },
      async run(ctx, { of }) {
        await ctx.setEvent('status', 'started');
        for (let done = 1; done <= of; done++) {
          await ctx.step(`part-${done}`, () => done);
          await ctx.setEvent('progress', { done, of });
        }
        await ctx.step('hold', () => gate);
        await ctx.waitForSignal('go');
        await ctx.setEvent('status', 'finished');
        return of;
      },
    });
  }

  test('getEvent returns the latest value of each key, recorded in the log at its position', async () => {
    const gate = deferred();
    const workflow = progress(gate.promise);
    const { runtime } = await runtimeOver([workflow]);
    await runtime.start(workflow, { of: 3 }, { executionId: 'p-1' });
    expect(await runtime.getEvent('p-1', 'status')).toBe('started');
    await until(async () => ((await runtime.getEvent('p-1', 'progress')) as { done: number })?.done === 3);
    expect(await runtime.getEvent('p-1', 'progress')).toEqual({ done: 3, of: 3 });
    const log = await runtime.history('p-1');
    const published = log.filter(
      (event) => event.type === 'STEP_COMPLETED' && (event.payload as { kind: string }).kind === 'event',
    );
    expect(published.map((event) => event.payload)).toEqual([
      { position: 0, name: 'status', kind: 'event', output: 'started' },
      { position: 2, name: 'progress', kind: 'event', output: { done: 1, of: 3 } },
      { position: 4, name: 'progress', kind: 'event', output: { done: 2, of: 3 } },
      { position: 6, name: 'progress', kind: 'event', output: { done: 3, of: 3 } },
    ]);
    gate.resolve();
  });

  test('getEvent waits for the first value; it answers undefined at its timeout, and at the end when the key was never set', async () => {
    const gate = deferred();
    const workflow = progress(gate.promise);
    const { runtime } = await runtimeOver([workflow]);
    await runtime.start(workflow, { of: 1 }, { executionId: 'p-2' });
    expect(await runtime.getEvent('p-2', 'never', { timeoutMs: 20 })).toBeUndefined();
    const finished = runtime.getEvent('p-2', 'status', { timeoutMs: 0 });
    expect(await finished).toBe('started');
    gate.resolve();
    await until(async () => (await runtime.loadState('p-2'))?.status === 'suspended');
    await runtime.signal('p-2', 'go', true);
    await runtime.handle('p-2').result();
    expect(await runtime.getEvent('p-2', 'status')).toBe('finished');
    const started = Date.now();
    expect(await runtime.getEvent('p-2', 'never', { timeoutMs: 10_000 })).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  test('a waiting getEvent gets the first value once it is published', async () => {
    const gate = deferred();
    const late = defineWorkflow({
      name: 'late',
      input: z.object({}),
      async run(ctx) {
        await ctx.step('wait', () => gate.promise);
        await ctx.setEvent('ready', true);
        return 'ok';
      },
    });
    const { runtime } = await runtimeOver([late]);
    await runtime.start(late, {}, { executionId: 'p-3' });
    const waiting = runtime.getEvent('p-3', 'ready', { timeoutMs: 10_000 });
    gate.resolve();
    expect(await waiting).toBe(true);
  });

  test('replay writes no event again, and getEvent refuses a bad request or an unknown execution', async () => {
    const gate = deferred();
    gate.resolve();
    const workflow = progress(gate.promise);
    const { runtime, stores } = await runtimeOver([workflow]);
    await runtime.start(workflow, { of: 2 }, { executionId: 'p-4' });
    await until(async () => (await runtime.loadState('p-4'))?.status === 'suspended');
    await runtime.close();
    const restarted = createRuntime({ stores, workflows: [workflow], maintenance: false });
    runtimes.push(restarted);
    await restarted.signal('p-4', 'go', true);
    expect(await restarted.handle('p-4').result()).toBe(2);
    const log = await restarted.history('p-4');
    const events = log.filter(
      (event) => event.type === 'STEP_COMPLETED' && (event.payload as { kind: string }).kind === 'event',
    );
    expect(events).toHaveLength(4);
    expect(types(log)).toContain('EXECUTION_RESUMED');

    await expect(restarted.getEvent('nobody', 'status')).rejects.toBeInstanceOf(ExecutionNotFoundError);
    await expect(restarted.getEvent('p-4', '')).rejects.toBeInstanceOf(InvalidInputError);
    await expect(restarted.getEvent('p-4', 'status', { timeoutMs: -1 })).rejects.toBeInstanceOf(
      InvalidInputError,
    );
  });
});
