/**
 * Issue #23, durable streams (adr/0051): `ctx.stream(name).write(value)` records each entry in
 * the log at an offset before it resolves; `runtime.readStream(id, name, { from })` yields them
 * in order, live, from any offset, and ends when the execution ends. On every real store.
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
import { deferred } from './support/stores.js';

async function collect<T>(iterable: AsyncIterable<T>, limit = Number.POSITIVE_INFINITY): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) {
    out.push(item);
    if (out.length >= limit) break;
  }
  return out;
}

describe.each(realStores)('durable streams (%s store)', (_, openStores) => {
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

  /** Writes `count` tokens to `tokens`, one to `other`, waits for `more`, writes two more. */
  function answer(more: Promise<void>) {
    return defineWorkflow({
      name: 'answer',
      input: z.object({ count: z.number() }),
      async run(ctx, { count }) {
        const tokens = ctx.stream('tokens');
        const words = await ctx.step('think', () => Array.from({ length: count }, (_, i) => `w${i}`));
        const offsets: number[] = [];
        for (const word of words) offsets.push(await tokens.write(word));
        await ctx.stream('other').write('elsewhere');
        await ctx.step('more', () => more);
        offsets.push(await tokens.write('late-1'), await tokens.write('late-2'));
        return offsets;
      },
    });
  }

  test('a reader gets every entry in order with dense offsets, live, and its iteration ends with the execution', async () => {
    const more = deferred();
    const workflow = answer(more.promise);
    const { runtime } = await runtimeOver([workflow]);
    await runtime.start(workflow, { count: 5 }, { executionId: 's-1' });
    const reading = collect(runtime.readStream<string>('s-1', 'tokens'));
    // The first five are durable before the body waits on `more`; the reader has them already.
    const early = await collect(runtime.readStream<string>('s-1', 'tokens'), 5);
    expect(early.map((entry) => entry.value)).toEqual(['w0', 'w1', 'w2', 'w3', 'w4']);
    more.resolve();
    const all = await reading;
    expect(all).toEqual([
      ...['w0', 'w1', 'w2', 'w3', 'w4'].map((value, offset) => ({ offset, value })),
      { offset: 5, value: 'late-1' },
      { offset: 6, value: 'late-2' },
    ]);
    expect(await runtime.handle('s-1').result()).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(await collect(runtime.readStream('s-1', 'other'))).toEqual([{ offset: 0, value: 'elsewhere' }]);
  });

  test('a reader that disconnects resumes from the offset after its last entry and misses nothing', async () => {
    const more = deferred();
    const workflow = answer(more.promise);
    const { runtime } = await runtimeOver([workflow]);
    await runtime.start(workflow, { count: 4 }, { executionId: 's-2' });
    const first = await collect(runtime.readStream<string>('s-2', 'tokens'), 2);
    expect(first.map((entry) => entry.offset)).toEqual([0, 1]);
    more.resolve();
    const rest = await collect(
      runtime.readStream<string>('s-2', 'tokens', { from: first.at(-1)!.offset + 1 }),
    );
    expect(rest.map((entry) => entry.value)).toEqual(['w2', 'w3', 'late-1', 'late-2']);
  });

  test('replay writes no entry again: a restarted runtime continues the offsets', async () => {
    const more = deferred();
    const workflow = defineWorkflow({
      name: 'pausing',
      input: z.object({}),
      signals: { go: z.literal(true) },
      async run(ctx) {
        const out = ctx.stream('out');
        const a = await out.write('a');
        await ctx.waitForSignal('go');
        await ctx.step('more', () => more.promise);
        return [a, await out.write('b')];
      },
    });
    more.resolve();
    const { runtime, stores } = await runtimeOver([workflow]);
    await runtime.start(workflow, {}, { executionId: 's-3' });
    await collect(runtime.readStream('s-3', 'out'), 1);
    await runtime.close();
    const restarted = createRuntime({ stores, workflows: [workflow], maintenance: false });
    runtimes.push(restarted);
    await restarted.signal('s-3', 'go', true);
    expect(await restarted.handle('s-3').result()).toEqual([0, 1]);
    expect(await collect(restarted.readStream('s-3', 'out'))).toEqual([
      { offset: 0, value: 'a' },
      { offset: 1, value: 'b' },
    ]);
  });

  test('readStream refuses a bad request at the call, and an unknown execution when read', async () => {
    const { runtime } = await runtimeOver([answer(Promise.resolve())]);
    expect(() => runtime.readStream('x', '')).toThrow(InvalidInputError);
    expect(() => runtime.readStream('x', 'tokens', { from: -1 })).toThrow(InvalidInputError);
    expect(() => runtime.readStream('x', 'tokens', { from: 1.5 })).toThrow(InvalidInputError);
    await expect(collect(runtime.readStream('nobody', 'tokens'))).rejects.toBeInstanceOf(
      ExecutionNotFoundError,
    );
  });
});
