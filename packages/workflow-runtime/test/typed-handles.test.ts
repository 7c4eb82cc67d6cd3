/**
 * Issues 24.3, 24.4 and 24.9 through the handles: `runtime.handle(workflow, id)` (and the
 * handles `start` and `enqueue` return, and the client's) type `.signal(name, payload)`,
 * `.result()` and `.state()` by the workflow; `runtime.signal(workflow, id, name, payload)` is
 * checked; `start` and `enqueue` take untrusted `unknown` input, still validated, while a wrong
 * typed input fails to compile; a step output the log cannot record fails to compile.
 */
import {
  createClient,
  defineWorkflow,
  type ExecutionState,
  InvalidInputError,
  type MessagesOf,
  type Runtime,
  type SignalResult,
  UnknownSignalError,
  type WorkflowHandle,
} from '@skein/workflow-runtime';
import { describe, expect, expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import { backings, harness, until } from './support/stores.js';

const order = defineWorkflow({
  name: 'typed-order',
  input: z.object({ sku: z.string(), qty: z.number().int().positive() }),
  signals: { approve: z.boolean(), address: z.object({ city: z.string() }) },
  async run(ctx, { sku, qty }) {
    const ok = await ctx.waitForSignal('approve', { timeoutMs: 86_400_000 });
    if (ok !== true) return { sku, shipped: false as const };
    const { city } = await ctx.waitForSignal('address');
    const at = await ctx.step('ship', () => new Date(Date.UTC(2026, 0, qty)));
    return { sku, shipped: true as const, city, at };
  },
});

/** What the body returns, as TypeScript infers it. */
type Output = Awaited<ReturnType<(typeof order)['run']>>;

describe('typed handles (types)', () => {
  test('handle(workflow, id): result, state and signal typed by the workflow', () => {
    type Handle = WorkflowHandle<Output, MessagesOf<typeof order>>;
    const check = (handle: Handle) => {
      expectTypeOf(handle.result()).toEqualTypeOf<Promise<Output>>();
      expectTypeOf(handle.state()).toEqualTypeOf<Promise<ExecutionState<Output> | null>>();
      expectTypeOf(handle.signal('approve', true)).toEqualTypeOf<Promise<SignalResult>>();
      void handle.signal('address', { city: 'Oslo' });
      // @ts-expect-error: a typo'd signal name fails to compile
      void handle.signal('aprove', true);
      // @ts-expect-error: a payload of another type fails to compile
      void handle.signal('approve', 'yes');
      // @ts-expect-error: a payload missing a field fails to compile
      void handle.signal('address', {});
    };
    expect(typeof check).toBe('function');
  });

  test('the runtime: typed start, unknown input accepted, wrong typed input and bad step outputs refused', () => {
    // biome-ignore lint/suspicious/noExplicitAny: what an untyped caller passes is `any`
    const check = async (runtime: Runtime, json: unknown, loose: any) => {
      const started = await runtime.start(order, { sku: 'a', qty: 1 });
      expectTypeOf(started.result()).toEqualTypeOf<Promise<Output>>();
      void started.signal('approve', true);
      expectTypeOf(runtime.handle(order, 'x').state()).toEqualTypeOf<
        Promise<ExecutionState<Output> | null>
      >();
      expectTypeOf(runtime.handle('x').state()).toEqualTypeOf<Promise<ExecutionState | null>>();
      await runtime.start(order, json); // untrusted input: validated by the schema at run time
      await runtime.enqueue(order, json, { executionId: 'y' });
      await runtime.start(order, loose);
      // @ts-expect-error: an input of a known wrong type fails to compile
      await runtime.start(order, { sku: 'a', qty: '1' });
      // @ts-expect-error: also for enqueue
      await runtime.enqueue(order, { sku: 1, qty: 1 });
      await runtime.signal(order, 'x', 'approve', false);
      await runtime.signal('x', 'whatever', 'untyped callers are checked at run time');
      // @ts-expect-error: given the workflow, runtime.signal checks the name
      await runtime.signal(order, 'x', 'approved', false);
      // @ts-expect-error: and the payload
      await runtime.signal(order, 'x', 'address', { town: 'Oslo' });
    };
    expect(typeof check).toBe('function');
  });

  test('step outputs: what the codec records compiles; a URL, a function or a symbol does not', () => {
    class WithMethod {
      constructor(readonly n: number) {}
      twice(): number {
        return this.n * 2;
      }
    }
    defineWorkflow({
      name: 'typed-steps',
      input: z.null(),
      async run(ctx) {
        const plain = await ctx.step('plain', () => ({ a: 1, b: ['x', null], c: { d: true } }));
        expectTypeOf(plain).toEqualTypeOf<{ a: number; b: (string | null)[]; c: { d: boolean } }>();
        await ctx.step('date', () => new Date(0));
        await ctx.step('bigint', () => 1n);
        await ctx.step('map', () => new Map([['k', new Set([1])]]));
        await ctx.step('undefined', () => undefined);
        await ctx.step('void', async () => {});
        await ctx.step('error', () => new TypeError('kept'));
        await ctx.step('bytes', () => new Uint8Array([1]));
        await ctx.step('union', () => (Math.random() > 0.5 ? 'a' : 0));
        await ctx.step('unknown', (): unknown => JSON.parse('1'));
        // @ts-expect-error: a URL has methods: the codec refuses it
        await ctx.step('url', () => new URL('https://example.com'));
        // @ts-expect-error: nested too
        await ctx.step('nested-url', async () => ({ links: [new URL('https://example.com')] }));
        // @ts-expect-error: a function is not data
        await ctx.step('fn', () => () => 1);
        // @ts-expect-error: nor is a symbol
        await ctx.step('symbol', () => Symbol('s'));
        // @ts-expect-error: nor an instance of a class with methods
        await ctx.step('instance', () => new WithMethod(1));
        return null;
      },
    });
    expect(true).toBe(true);
  });
});

describe.each(backings)('typed handles (%s store)', (_, open) => {
  const h = harness(open);

  test('runtime.handle(workflow, id) signals, reads state and awaits the typed result', async () => {
    const { stores } = h.open();
    const runtime = h.runtime({ stores, workflows: [order] });
    await runtime.start(order, { sku: 'a', qty: 2 }, { executionId: 'typed-h-1' });
    const handle = runtime.handle(order, 'typed-h-1');
    await until(async () => (await handle.state())?.status === 'suspended');
    expect(await handle.signal('approve', true)).toMatchObject({ accepted: true });
    expect(await runtime.signal(order, 'typed-h-1', 'address', { city: 'Oslo' })).toMatchObject({
      accepted: true,
    });
    const output = await handle.result();
    expect(output).toEqual({ sku: 'a', shipped: true, city: 'Oslo', at: new Date(Date.UTC(2026, 0, 2)) });
    if (output.shipped) expect(output.at.getUTCDate()).toBe(2);
    expect((await handle.state())?.output).toEqual(output);
  });

  test('the runtime still refuses what an untyped caller gets wrong, before anything is written', async () => {
    const { stores } = h.open();
    const runtime = h.runtime({ stores, workflows: [order] });
    const untrusted: unknown = JSON.parse('{"sku":"a","qty":-1}');
    await expect(runtime.start(order, untrusted, { executionId: 'typed-h-2' })).rejects.toThrow(
      InvalidInputError,
    );
    expect(await stores.events.getExecution('typed-h-2')).toBeNull();
    const fine: unknown = JSON.parse('{"sku":"b","qty":1}');
    const handle = await runtime.enqueue(order, fine, { executionId: 'typed-h-3' });
    expect((await handle.state())?.input).toEqual({ sku: 'b', qty: 1 });
    const loose = runtime.handle(order, 'typed-h-3') as WorkflowHandle<unknown>;
    await expect(loose.signal('approved', true)).rejects.toThrow(UnknownSignalError);
    await expect(loose.signal('approve', 'yes')).rejects.toThrow(InvalidInputError);
  });

  test("the client's handles are typed the same way", async () => {
    const { stores } = h.open();
    const client = createClient({ stores, workflows: [order] });
    const started = await client.start(order, { sku: 'c', qty: 1 }, { executionId: 'typed-h-4' });
    expectTypeOf<ReturnType<typeof started.result>>().toEqualTypeOf<Promise<Output>>(); // not called: nothing polls
    expect(await client.handle(order, 'typed-h-4').signal('approve', false)).toMatchObject({
      accepted: true,
    });
    expect(await client.signal(order, 'typed-h-4', 'approve', true)).toMatchObject({ accepted: true });
    // @ts-expect-error: the client checks names as the runtime does
    await expect(client.signal(order, 'typed-h-4', 'nope', true)).rejects.toThrow(UnknownSignalError);
    const runner = h.runtime({ stores, workflows: [order] });
    await expect(runner.handle(order, 'typed-h-4').result()).resolves.toEqual({ sku: 'c', shipped: false });
    await client.close();
  });

  test("a handle cancels its execution, the runtime's and the client's alike", async () => {
    const { stores } = h.open();
    const runtime = h.runtime({ stores, workflows: [order] });
    const started = await runtime.start(order, { sku: 'd', qty: 1 }, { executionId: 'typed-h-5' });
    await until(async () => (await started.state())?.status === 'suspended');
    expect(await started.cancel('customer changed their mind')).toMatchObject({ cancelled: true });
    await expect(started.result()).rejects.toThrow();
    const ended = await started.state();
    expect(ended?.status).toBe('cancelled');
    expect(ended?.cancel?.reason).toBe('customer changed their mind');
    // A finished execution is left alone.
    expect(await started.cancel('again')).toMatchObject({ cancelled: false, status: 'cancelled' });

    const client = createClient({ stores, workflows: [order] });
    await client.start(order, { sku: 'e', qty: 1 }, { executionId: 'typed-h-6' });
    expect(await client.handle(order, 'typed-h-6').cancel('from the client')).toMatchObject({
      cancelled: true,
    });
    await expect(runtime.handle(order, 'typed-h-6').result()).rejects.toThrow();
    expect((await runtime.loadState('typed-h-6'))?.status).toBe('cancelled');
    await client.close();
  });
});
