/**
 * The signal inbox through the public API, on every real store: signal ids are scoped to their
 * execution (issue 15.3), a duplicate says so and writes nothing, the inbox is bounded and a
 * wait reads only what it needs (issue 25.4), and names every object inherits are unknown
 * signals (issue 25.9).
 */
import {
  createRuntime,
  defineWorkflow,
  InvalidInputError,
  type Runtime,
  type RuntimeOptions,
  SignalInboxFullError,
  type Stores,
  UnknownSignalError,
  type WorkflowContext,
} from '@skein/workflow-runtime';
import type { Signal, SignalStore } from '@skein/workflow-runtime/spi';
import { afterEach, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { realStores } from './support/real-stores.js';
import { deferred, payloadOf, types, until } from './support/stores.js';

/** A signal store that hands every call to `inner` and counts the signals `pending` returned. */
class CountingSignalStore implements SignalStore {
  returned: Signal[] = [];
  queries = 0;
  constructor(private readonly inner: SignalStore) {}
  send: SignalStore['send'] = (signal, options) => this.inner.send(signal, options);
  complete: SignalStore['complete'] = (executionId, signalId) => this.inner.complete(executionId, signalId);
  clear: SignalStore['clear'] = (executionId) => this.inner.clear(executionId);
  pending: SignalStore['pending'] = async (executionId, query) => {
    const page = await this.inner.pending(executionId, query);
    this.queries += 1;
    this.returned.push(...page);
    return page;
  };
}

describe.each(realStores)('signal inbox (%s store)', (_, openStores) => {
  const opened: Stores[] = [];
  const runtimes: Runtime[] = [];
  const backgroundErrors: unknown[] = [];
  afterEach(async () => {
    await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
    await Promise.all(opened.splice(0).map((stores) => stores.close()));
    expect(backgroundErrors.splice(0)).toEqual([]);
  });

  async function open(): Promise<Stores> {
    const stores = await openStores();
    opened.push(stores);
    return stores;
  }

  function runtimeOf(options: RuntimeOptions): Runtime {
    const runtime = createRuntime({ onError: (error) => backgroundErrors.push(error), ...options });
    runtimes.push(runtime);
    return runtime;
  }

  /** Waits for `approve` `waits` times after a step that `gate` holds open when `gated`. */
  function approval(waits = 1) {
    const gate = deferred();
    const workflow = defineWorkflow({
      name: 'approval',
      input: z.object({ gated: z.boolean() }),
      signals: { approve: z.string(), other: z.string() },
      async run(ctx, { gated }) {
        await ctx.step('hold', async () => {
          if (gated) await gate.promise;
          return 'held';
        });
        const got: (string | undefined)[] = [];
        for (let i = 0; i < waits; i++) got.push(await ctx.waitForSignal<string>('approve'));
        return got.join('+');
      },
    });
    return { workflow, gate };
  }

  async function until_(runtime: Runtime, executionId: string, check: (types: string[]) => boolean) {
    await until(async () => check(types(await runtime.history(executionId))), 20_000);
  }

  test('15.3: a signal id is scoped to its execution: an id still waiting in A’s inbox reaches B too', async () => {
    const stores = await open();
    const { workflow, gate } = approval();
    const runtime = runtimeOf({ stores, workflows: [workflow] });
    const a = await runtime.start(workflow, { gated: true }, { executionId: 'A' });
    const b = await runtime.start(workflow, { gated: false }, { executionId: 'B' });
    await until_(runtime, 'A', (log) => log.includes('STEP_STARTED'));
    await until(async () => (await b.state())?.status === 'suspended');

    const toA = await runtime.signal('A', 'approve', 'for A', { signalId: 'shared' });
    expect(toA).toEqual({ signalId: 'shared', accepted: true, duplicate: false, woke: false });
    const toB = await runtime.signal('B', 'approve', 'for B', { signalId: 'shared' });
    expect(toB).toEqual({ signalId: 'shared', accepted: true, duplicate: false, woke: true });
    expect(await b.result()).toBe('for B');
    gate.resolve();
    expect(await a.result()).toBe('for A');
    for (const [id, payload] of [
      ['A', 'for A'],
      ['B', 'for B'],
    ] as const) {
      const received = (await runtime.history(id)).filter((event) => event.type === 'SIGNAL_RECEIVED');
      expect(received.map((event) => payloadOf(event))).toEqual([
        { position: 1, name: 'approve', signalId: 'shared', payload },
      ]);
    }
  });

  test('15.3: resending an accepted id says duplicate and writes nothing, whether it waits or was consumed', async () => {
    const stores = await open();
    const { workflow, gate } = approval(2);
    const runtime = runtimeOf({ stores, workflows: [workflow] });
    const handle = await runtime.start(workflow, { gated: true }, { executionId: 'dup' });
    await until_(runtime, 'dup', (log) => log.includes('STEP_STARTED'));

    expect(await runtime.signal('dup', 'approve', 'first', { signalId: 'x' })).toMatchObject({
      accepted: true,
    });
    const waiting = await runtime.signal('dup', 'approve', 'changed', { signalId: 'x' });
    expect(waiting).toEqual({ signalId: 'x', accepted: false, duplicate: true, woke: false });
    expect((await stores.signals.pending('dup')).map((s) => [s.signalId, s.payload])).toEqual([
      ['x', '"first"'],
    ]);

    gate.resolve();
    await until(async () => (await handle.state())?.status === 'suspended');
    // The run marks the row consumed right after its suspension is durable.
    await until(async () => (await stores.signals.pending('dup')).length === 0);
    const before = await runtime.history('dup');
    expect(types(before)).toContain('SIGNAL_RECEIVED');
    const consumed = await runtime.signal('dup', 'approve', 'again', { signalId: 'x' });
    expect(consumed).toEqual({ signalId: 'x', accepted: false, duplicate: true, woke: false });
    expect(await runtime.history('dup')).toEqual(before);
    expect(await stores.signals.pending('dup')).toEqual([]);

    expect(await runtime.signal('dup', 'approve', 'second', { signalId: 'y' })).toMatchObject({ woke: true });
    expect(await handle.result()).toBe('first+second');
  });

  test('25.4: past maxPendingSignals runtime.signal refuses with SignalInboxFullError and writes nothing', async () => {
    const stores = await open();
    const { workflow, gate } = approval(4);
    const runtime = runtimeOf({ stores, workflows: [workflow], maxPendingSignals: 3 });
    const handle = await runtime.start(workflow, { gated: true }, { executionId: 'full' });
    await until_(runtime, 'full', (log) => log.includes('STEP_STARTED'));
    for (const id of ['a', 'b', 'c']) await runtime.signal('full', 'approve', id, { signalId: id });
    const log = await runtime.history('full');

    const refused = runtime.signal('full', 'approve', 'd', { signalId: 'd' });
    await expect(refused).rejects.toBeInstanceOf(SignalInboxFullError);
    await expect(refused).rejects.toThrow(
      'execution "full": signal "approve" refused: the inbox already holds 3 signals waiting to be consumed',
    );
    await expect(refused).rejects.toMatchObject({
      code: 'SIGNAL_INBOX_FULL',
      executionId: 'full',
      maxPending: 3,
    });
    // A retry of an accepted signal at the bound is still a duplicate, not a refusal.
    expect(await runtime.signal('full', 'approve', 'a', { signalId: 'a' })).toMatchObject({
      duplicate: true,
    });
    expect((await stores.signals.pending('full')).map((s) => s.signalId)).toEqual(['a', 'b', 'c']);
    expect(await runtime.history('full')).toEqual(log);
    // Another execution has its own bound.
    const other = runtimeOf({ stores, workflows: [approval().workflow], maxPendingSignals: 3 });
    const second = await other.start(workflow, { gated: false }, { executionId: 'other' });
    await until(async () => (await second.state())?.status === 'suspended');
    expect(await other.signal('other', 'approve', 'ok')).toMatchObject({ accepted: true, woke: true });
    // Consumed signals leave the bound: once the three are consumed, the fourth is accepted.
    gate.resolve();
    await until(async () => (await handle.state())?.status === 'suspended');
    await until(async () => (await stores.signals.pending('full')).length === 0);
    expect(await runtime.signal('full', 'approve', 'd', { signalId: 'd' })).toMatchObject({
      accepted: true,
      woke: true,
    });
    expect(await handle.result()).toBe('a+b+c+d');
  });

  test('createRuntime refuses a maxPendingSignals that is not an integer >= 1', async () => {
    const stores = await open();
    for (const maxPendingSignals of [0, -1, 2.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => createRuntime({ stores, workflows: [], maxPendingSignals })).toThrow(InvalidInputError);
      expect(() => createRuntime({ stores, workflows: [], maxPendingSignals })).toThrow(/maxPendingSignals/);
    }
  });

  test('25.4: a loop consuming 200 signals of one name among 600 of another reads each of its signals once', async () => {
    const stores = await open();
    const counting = new CountingSignalStore(stores.signals);
    const gate = deferred();
    const loop = defineWorkflow({
      name: 'loop',
      input: z.object({}),
      signals: { item: z.number(), noise: z.string() },
      async run(ctx) {
        await ctx.step('hold', () => gate.promise.then(() => 'held'));
        let sum = 0;
        for (let i = 0; i < 200; i++) sum += (await ctx.waitForSignal<number>('item')) ?? 0;
        return sum;
      },
    });
    const runtime = runtimeOf({ stores: { ...stores, signals: counting }, workflows: [loop] });
    const handle = await runtime.start(loop, {}, { executionId: 'loop' });
    await until_(runtime, 'loop', (log) => log.includes('STEP_STARTED'));
    for (let i = 0; i < 800; i++) {
      if (i % 4 === 0) await runtime.signal('loop', 'item', i / 4);
      else await runtime.signal('loop', 'noise', 'x'.repeat(100));
    }
    gate.resolve();
    expect(await handle.result()).toBe((199 * 200) / 2);
    // All 200 waits ran in one run: each read one signal of its name, and no noise at all.
    expect(counting.returned.filter((signal) => signal.name === 'noise')).toEqual([]);
    expect(counting.returned.length).toBeLessThanOrEqual(200 + 2);
    // Its end empties the inbox (the consumed rows too, so their ids are free with it).
    await until(async () => (await stores.signals.pending('loop')).length === 0);
  });

  test('woke is true when the re-check a run makes right after suspending finds the signal first', async () => {
    const stores = await open();
    // The re-check's inbox read (the second read: the wait's own is the first) waits for the test.
    const gate = deferred();
    let reads = 0;
    const inner = stores.signals;
    const gated: SignalStore = {
      send: (signal, options) => inner.send(signal, options),
      complete: (executionId, signalId) => inner.complete(executionId, signalId),
      clear: (executionId) => inner.clear(executionId),
      pending: async (executionId, query) => {
        reads += 1;
        if (reads === 2) await gate.promise;
        return inner.pending(executionId, query);
      },
    };
    const waiter = defineWorkflow({
      name: 'waiter',
      input: z.object({}),
      signals: { go: z.string() },
      run: (ctx) => ctx.waitForSignal<string>('go'),
    });
    const runtime = runtimeOf({ stores: { ...stores, signals: gated }, workflows: [waiter] });
    const handle = await runtime.start(waiter, {}, { executionId: 'recheck' });
    await until(async () => (await handle.state())?.status === 'suspended' && reads === 2);
    const sent = runtime.signal('recheck', 'go', 'went');
    // The send is stored; then the re-check reads it and resumes the execution before the send asks.
    await until(async () => (await stores.signals.pending('recheck')).length === 1);
    gate.resolve();
    expect(await sent).toMatchObject({ accepted: true, woke: true });
    expect(await handle.result()).toBe('went');
  });

  test('25.4: waiting on 10,000 names at once reads at most one signal per wait, whatever the inbox holds', async () => {
    const stores = await open();
    const counting = new CountingSignalStore(stores.signals);
    const names = Array.from({ length: 10_000 }, (_, i) => `n${i}`);
    const many = defineWorkflow({
      name: 'many',
      input: z.object({}),
      signals: {
        ...Object.fromEntries(names.map((name) => [name, z.string()])),
        noise: z.string(),
      } as Record<string, z.ZodString>,
      async run(ctx) {
        return Promise.race(names.map((name) => ctx.waitForSignal<string>(name)));
      },
    });
    const runtime = runtimeOf({ stores: { ...stores, signals: counting }, workflows: [many] });
    const handle = await runtime.start(many, {}, { executionId: 'many' });
    await until(async () => (await handle.state())?.status === 'suspended', 60_000);
    // 500 unrelated signals wait in the inbox (written through the store, as runtime.signal does).
    for (let i = 0; i < 500; i++) {
      const noise = { signalId: `noise-${i}`, executionId: 'many', name: 'noise', payload: '"x"', sentAt: i };
      expect(await stores.signals.send(noise)).toBe('sent');
    }
    counting.returned = [];
    expect(await runtime.signal('many', 'n9999', 'last')).toMatchObject({ woke: true });
    expect(await handle.result()).toBe('last');
    // The replay's 10,000 waits each read their own name; only n9999's wait found a signal.
    expect(counting.queries).toBeGreaterThanOrEqual(names.length);
    expect(counting.returned.map((signal) => signal.name)).toEqual(['n9999']);
  }, 120_000);

  test('25.9: signal names every object inherits are unknown signals, at runtime.signal and at the wait', async () => {
    const stores = await open();
    const inherited = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'];
    const waiter = defineWorkflow({
      name: 'waiter',
      input: z.object({ name: z.string() }),
      signals: { approve: z.string() },
      async run(ctx, { name }) {
        try {
          // An untyped caller (the name comes from the input): the runtime refuses what it must.
          return await (ctx as WorkflowContext).waitForSignal(name);
        } catch (error) {
          return (error as Error).name;
        }
      },
    });
    const runtime = runtimeOf({ stores, workflows: [waiter] });
    const suspended = await runtime.start(waiter, { name: 'approve' }, { executionId: 'w' });
    await until(async () => (await suspended.state())?.status === 'suspended');
    for (const name of inherited) {
      const sent = runtime.signal('w', name, 'x');
      await expect(sent, name).rejects.toBeInstanceOf(UnknownSignalError);
      await expect(sent, name).rejects.toThrow(`declares no signal "${name}" (declared: approve)`);
      const body = await runtime.start(waiter, { name }, { executionId: `wait-${name}` });
      expect(await body.result(), name).toBe('UnknownSignalError');
    }
    expect(await stores.signals.pending('w')).toEqual([]);
  });

  test('25.9: a workflow may declare a signal named __proto__, and it is delivered like any other', async () => {
    const stores = await open();
    const odd = defineWorkflow({
      name: 'odd',
      input: z.object({}),
      signals: { ['__proto__']: z.string(), constructor: z.number() },
      async run(ctx) {
        return [await ctx.waitForSignal('__proto__'), await ctx.waitForSignal('constructor')];
      },
    });
    const runtime = runtimeOf({ stores, workflows: [odd] });
    const handle = await runtime.start(odd, {}, { executionId: 'odd' });
    await runtime.signal('odd', '__proto__', 'proto');
    // The refused payload goes first: once 7 is delivered the execution may end at once.
    await expect(runtime.signal('odd', 'constructor', 'not a number')).rejects.toBeInstanceOf(
      InvalidInputError,
    );
    await runtime.signal('odd', 'constructor', 7);
    expect(await handle.result()).toEqual(['proto', 7]);
  });
});
