/**
 * Issue 23.5, adr/0064: `ctx.child` returns a handle (awaited, it is the output as before;
 * `signal` and `cancel` reach the child), and `ctx.signal(otherId, name, payload)` is recorded
 * like a step: delivered once per recorded call, also when the sender crashes between the
 * delivery and the record, because the signal id is derived from the sender and the position.
 */
import {
  ChildFailedError,
  createRuntime,
  defineWorkflow,
  ExecutionNotFoundError,
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

/** Waits for `go` twice: the second wait times out unless a second copy arrived. */
const receiver = defineWorkflow({
  name: 'receiver',
  input: z.null(),
  signals: { go: z.number() },
  async run(ctx) {
    const first = await ctx.waitForSignal('go');
    const second = await ctx.waitForSignal('go', { timeoutMs: 300 });
    return { first, second: second ?? null };
  },
});

const cleanups: string[] = [];
const worker = defineWorkflow({
  name: 'worker',
  input: z.object({ job: z.string() }),
  signals: { assign: z.object({ to: z.string() }) },
  async run(ctx, { job }) {
    try {
      const { to } = await ctx.waitForSignal('assign');
      return `${job} by ${to}`;
    } finally {
      await ctx.step('cleanup', () => cleanups.push(job));
    }
  },
});

const boss = defineWorkflow({
  name: 'boss',
  input: z.object({ cancel: z.boolean() }),
  async run(ctx, { cancel }) {
    const handle = ctx.child(worker, { job: 'paint' });
    if (cancel) await handle.cancel('not needed');
    else await handle.signal('assign', { to: 'ana' });
    try {
      return { out: await handle, id: handle.executionId, same: (await handle.result()) === (await handle) };
    } catch (error) {
      if (error instanceof ChildFailedError) return { out: `child ${error.status}`, id: handle.executionId };
      throw error;
    }
  },
});

const sender = defineWorkflow({
  name: 'sender',
  input: z.object({ to: z.string() }),
  async run(ctx, { to }) {
    const sent = await ctx.signal(receiver, to, 'go', 7);
    await ctx.step('after', () => 'after');
    return sent;
  },
});

const prober = defineWorkflow({
  name: 'prober',
  input: z.object({ to: z.string() }),
  async run(ctx, { to }) {
    let outcome: string;
    try {
      await ctx.signal(to, 'go', 1);
      outcome = 'delivered';
    } catch (error) {
      outcome = error instanceof ExecutionNotFoundError ? 'not found' : `other: ${String(error)}`;
    }
    await ctx.sleep('nap', 200);
    return outcome;
  },
});

/** An event store whose append carrying a `send` outcome fails once (the process died there). */
function failingSendRecord(stores: Stores): { stores: Stores; failed: () => boolean } {
  let failed = false;
  const events = Object.create(stores.events) as Stores['events'];
  events.append = async (request) => {
    const carriesSend = request.events.some(
      (event) => event.type === 'STEP_COMPLETED' && event.payload.includes('"kind":"send"'),
    );
    if (carriesSend && !failed) {
      failed = true;
      throw new Error('simulated crash: the record of the delivered signal is lost');
    }
    return stores.events.append(request);
  };
  return { stores: { ...stores, events }, failed: () => failed };
}

describe.each(realStores)('workflow to workflow (%s store)', (_, openStores) => {
  const opened: Stores[] = [];
  const runtimes: Runtime[] = [];
  afterEach(async () => {
    await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
    await Promise.all(opened.splice(0).map((stores) => stores.close()));
    cleanups.length = 0;
  });
  async function storesOf(): Promise<Stores> {
    const stores = await openStores();
    opened.push(stores);
    return stores;
  }
  function runtimeOf(options: RuntimeOptions): Runtime {
    const runtime = createRuntime({ onError: () => undefined, maintenance: false, ...options });
    runtimes.push(runtime);
    return runtime;
  }

  test('a child handle signals its child and is awaited for the output; both calls are in the parent log', async () => {
    const stores = await storesOf();
    const runtime = runtimeOf({ stores, workflows: [boss, worker] });
    await runtime.start(boss, { cancel: false }, { executionId: 'boss-1' });
    expect(await runtime.result('boss-1')).toEqual({
      out: 'paint by ana',
      id: 'boss-1-child-0',
      same: true,
    });
    const log = await runtime.history('boss-1');
    const send = log.find((event) => event.type === 'STEP_COMPLETED' && event.payload.kind === 'send');
    expect(send?.payload).toMatchObject({
      position: 1,
      name: 'assign',
      output: { ok: { executionId: 'boss-1-child-0', signalId: 'sent:1:boss-1' } },
    });
    const childLog = await runtime.history('boss-1-child-0');
    const received = childLog.find((event) => event.type === 'SIGNAL_RECEIVED');
    expect(received?.payload).toMatchObject({ signalId: 'sent:1:boss-1', payload: { to: 'ana' } });
  });

  test('a child handle cancels its child: its cleanup runs and the handle rejects with ChildFailedError', async () => {
    const stores = await storesOf();
    const runtime = runtimeOf({ stores, workflows: [boss, worker] });
    await runtime.start(boss, { cancel: true }, { executionId: 'boss-2' });
    expect(await runtime.result('boss-2')).toEqual({ out: 'child cancelled', id: 'boss-2-child-0' });
    expect((await runtime.loadState('boss-2-child-0'))?.status).toBe('cancelled');
    expect(cleanups).toEqual(['paint']);
    const log = await runtime.history('boss-2');
    const cancel = log.find((event) => event.type === 'STEP_COMPLETED' && event.payload.kind === 'cancel');
    expect(cancel?.payload).toMatchObject({ position: 1, name: 'boss-2-child-0', output: { ok: null } });
  });

  test('ctx.signal reaches another execution once, though the sender crashed after delivering and before recording', async () => {
    const base = await storesOf();
    const { stores, failed } = failingSendRecord(base);
    const runtime = runtimeOf({ stores, workflows: [sender, receiver] });
    await runtime.start(receiver, null, { executionId: 'rx-1' });
    await until(async () => (await runtime.loadState('rx-1'))?.status === 'suspended');
    await runtime.start(sender, { to: 'rx-1' }, { executionId: 'tx-1' });
    await until(async () => failed());
    await until(async () => runtime.activeExecutions().length === 0);
    // The sender's log has no record of the send: a fresh process takes it over and sends again.
    const before = await runtime.history('tx-1');
    expect(before.some((event) => event.type === 'STEP_COMPLETED')).toBe(false);
    const recovered = runtimeOf({ stores: base, workflows: [sender, receiver] });
    const state = await recovered.execute({ executionId: 'tx-1', workflow: 'sender' });
    expect(state.status).toBe('completed');
    expect(state.output).toEqual({ executionId: 'rx-1', signalId: 'sent:0:tx-1' });
    // The receiver got one copy: its second wait timed out.
    await until(async () => (await recovered.loadState('rx-1'))?.status === 'suspended');
    await until(async () => {
      await recovered.wake('rx-1');
      return (await recovered.loadState('rx-1'))?.status === 'completed';
    });
    expect(await recovered.result('rx-1')).toEqual({ first: 7, second: null });
  });

  test('a refusal is recorded: the replay throws it again though the receiver exists by then', async () => {
    const stores = await storesOf();
    const runtime = runtimeOf({ stores, workflows: [prober, receiver] });
    await runtime.start(prober, { to: 'ghost' }, { executionId: 'probe-1' });
    await until(async () => (await runtime.loadState('probe-1'))?.status === 'suspended');
    await runtime.start(receiver, null, { executionId: 'ghost' });
    await until(async () => {
      await runtime.wake('probe-1');
      return (await runtime.loadState('probe-1'))?.status === 'completed';
    });
    expect(await runtime.result('probe-1')).toBe('not found');
    const ghost = await runtime.loadState('ghost');
    expect(ghost?.consumedSignals ?? []).toEqual([]);
    const log = await runtime.history('probe-1');
    const send = log.find((event) => event.type === 'STEP_COMPLETED' && event.payload.kind === 'send');
    const output = (send?.type === 'STEP_COMPLETED' ? send.payload.output : undefined) as {
      refused: unknown;
    };
    expect(output.refused).toBeInstanceOf(ExecutionNotFoundError);
  });

  test('L7: a bad receiver id or signal name fails ctx.signal before it takes a position', async () => {
    const stores = await storesOf();
    const bad = defineWorkflow({
      name: 'bad-sender',
      input: z.object({ to: z.string(), name: z.string() }),
      async run(ctx, { to, name }) {
        try {
          await ctx.signal(to, name, 1);
          return 'sent';
        } catch (error) {
          return error instanceof InvalidInputError ? error.message : `other: ${String(error)}`;
        }
      },
    });
    const runtime = runtimeOf({ stores, workflows: [bad] });
    await runtime.start(bad, { to: '', name: 'go' }, { executionId: 'bad-1' });
    expect(await runtime.result('bad-1')).toMatch(/ctx\.signal call is invalid: executionId/);
    await runtime.start(bad, { to: 'x', name: '' }, { executionId: 'bad-2' });
    expect(await runtime.result('bad-2')).toMatch(/ctx\.signal call is invalid: name/);
    for (const id of ['bad-1', 'bad-2'])
      expect((await runtime.loadState(id))?.calls.filter((call) => call?.kind === 'send')).toEqual([]);
  });
});
