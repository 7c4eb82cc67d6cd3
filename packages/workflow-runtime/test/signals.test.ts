/**
 * Issue #5, signals: `runtime.signal` validates against the declared signals and writes the
 * durable inbox (never the log); `ctx.waitForSignal` consumes the oldest unconsumed signal of
 * its name at its position and records `SIGNAL_RECEIVED`, so replay returns the same payload.
 */
import {
  defineWorkflow,
  ExecutionFinishedError,
  ExecutionNotFoundError,
  InvalidInputError,
  PayloadTooLargeError,
  readHistory,
  UnknownSignalError,
} from '@skein/workflow-runtime';
import type { SignalStore } from '@skein/workflow-runtime/spi';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
  backings,
  CrashingEventStore,
  deferred,
  harness,
  payloadOf,
  types,
  until,
  withEvents,
} from './support/stores.js';

const T0 = Date.UTC(2026, 5, 1);

describe.each(backings)('signals (%s store)', (_, open) => {
  const h = harness(open);

  function approval(timeoutMs?: number) {
    const ran: string[] = [];
    const gate = deferred();
    const workflow = defineWorkflow({
      name: 'approval',
      input: z.object({ gated: z.boolean() }),
      signals: { approve: z.boolean(), note: z.object({ text: z.string().max(10) }) },
      async run(ctx, { gated }) {
        const hold = await ctx.step('reserve', async () => {
          ran.push('reserve');
          if (gated) await gate.promise;
          return 'hold-1';
        });
        const ok =
          timeoutMs === undefined
            ? await ctx.waitForSignal('approve', { schema: z.boolean() })
            : await ctx.waitForSignal('approve', { schema: z.boolean(), timeoutMs });
        return ok ? ctx.step('charge', () => ran.push('charge') && `charged ${hold}`) : 'rejected';
      },
    });
    return { workflow, ran, gate };
  }

  test('a waiting execution suspends, a signal wakes it, SIGNAL_RECEIVED holds its position and payload, and the inbox row is gone', async () => {
    const { stores } = h.open();
    const { workflow, ran } = approval();
    const runtime = h.runtime({ stores, workflows: [workflow] });
    const handle = await runtime.start(workflow, { gated: false }, { executionId: 'sig-1' });
    await until(async () => (await handle.state())?.status === 'suspended');
    const suspended = await runtime.history('sig-1');
    expect(types(suspended)).toEqual([
      'EXECUTION_STARTED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'EXECUTION_SUSPENDED',
    ]);
    expect(payloadOf(suspended[3])).toMatchObject({ reason: 'waiting for a signal', signals: ['approve'] });

    const sent = await runtime.signal('sig-1', 'approve', true);
    expect(sent).toMatchObject({ accepted: true, woke: true });
    expect(await handle.result()).toBe('charged hold-1');
    const log = await runtime.history('sig-1');
    expect(types(log).slice(4)).toEqual([
      'EXECUTION_RESUMED',
      'SIGNAL_RECEIVED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'EXECUTION_COMPLETED',
    ]);
    expect(payloadOf(log[5])).toEqual({
      position: 1,
      name: 'approve',
      signalId: sent.signalId,
      payload: true,
    });
    expect(ran).toEqual(['reserve', 'charge']);
    expect(await stores.signals.pending('sig-1')).toEqual([]);
  });

  test('a signal sent before the wait is kept for it: the wait consumes it without suspending', async () => {
    const { stores } = h.open();
    const { workflow, gate } = approval();
    const runtime = h.runtime({ stores, workflows: [workflow] });
    const handle = await runtime.start(workflow, { gated: true }, { executionId: 'early' });
    await until(async () => types(await runtime.history('early')).includes('STEP_STARTED'));
    const sent = await runtime.signal('early', 'approve', false);
    expect(sent).toMatchObject({ accepted: true, woke: false });
    expect(await stores.signals.pending('early')).toHaveLength(1);
    gate.resolve();
    expect(await handle.result()).toBe('rejected');
    const log = await runtime.history('early');
    expect(types(log)).not.toContain('EXECUTION_SUSPENDED');
    expect(log.find((e) => e.type === 'SIGNAL_RECEIVED')?.payload).toMatchObject({ signalId: sent.signalId });
  });

  test('refusals are clear and write nothing: unknown execution, finished, undeclared name, bad payload, oversized', async () => {
    const { stores } = h.open({ maxPayloadBytes: 4096 });
    const { workflow } = approval();
    const runtime = h.runtime({ stores, workflows: [workflow], maxPayloadBytes: 200 });
    await runtime.start(workflow, { gated: false }, { executionId: 'target' });
    await until(async () => (await runtime.loadState('target'))?.status === 'suspended');
    const before = await runtime.history('target');

    await expect(runtime.signal('nobody', 'approve', true)).rejects.toBeInstanceOf(ExecutionNotFoundError);
    const undeclared = runtime.signal('target', 'veto', true);
    await expect(undeclared).rejects.toBeInstanceOf(UnknownSignalError);
    await expect(undeclared).rejects.toThrow(/declares no signal "veto" \(declared: approve, note\)/);
    const invalid = runtime.signal('target', 'note', { text: 'far too long a note', extra: 1 });
    await expect(invalid).rejects.toBeInstanceOf(InvalidInputError);
    await expect(invalid).rejects.toThrow(/payload\.text: .*10/);
    await expect(runtime.signal('target', 'approve', 'yes')).rejects.toThrow(/payload: /);
    const big = runtime.signal('target', 'note', { text: 'x'.repeat(300) });
    await expect(big).rejects.toBeInstanceOf(InvalidInputError);
    const bigSchema = defineWorkflow({
      name: 'big',
      input: z.null(),
      signals: { blob: z.string() },
      run: async (ctx) => ctx.waitForSignal('blob'),
    });
    const other = h.runtime({ stores, workflows: [bigSchema], maxPayloadBytes: 200 });
    await other.start(bigSchema, null, { executionId: 'blob' });
    await expect(other.signal('blob', 'blob', 'x'.repeat(300))).rejects.toBeInstanceOf(PayloadTooLargeError);
    await expect(runtime.signal('target', '', true)).rejects.toThrow(/signal\.name/);

    expect(await runtime.history('target')).toEqual(before);
    expect(await stores.signals.pending('target')).toEqual([]);
    expect(await stores.signals.pending('blob')).toEqual([]);

    await runtime.signal('target', 'approve', false);
    expect(await runtime.result('target')).toBe('rejected');
    const finished = runtime.signal('target', 'approve', true);
    await expect(finished).rejects.toBeInstanceOf(ExecutionFinishedError);
    await expect(finished).rejects.toThrow(/"target" is completed; signal "approve" refused/);
    expect(await stores.signals.pending('target')).toEqual([]);
  });

  test('docs/architecture.md#context-calls: on timeout the wait resolves undefined and the workflow takes the safe branch', async () => {
    const { stores } = h.open();
    const { workflow, ran } = approval(86_400_000);
    let now = T0;
    const runtime = h.runtime({ stores, workflows: [workflow], clock: () => now });
    await runtime.start(workflow, { gated: false }, { executionId: 'late' });
    await until(async () => (await runtime.loadState('late'))?.status === 'suspended');
    const scheduled = (await runtime.history('late')).find((e) => e.type === 'TIMER_SCHEDULED');
    expect(payloadOf(scheduled)).toMatchObject({ position: 1, purpose: 'signal', dueAt: T0 + 86_400_000 });
    expect(await stores.timers.forExecution('late')).toHaveLength(1);

    now = T0 + 86_400_000;
    expect(await runtime.wake('late')).toMatchObject({ status: 'completed', output: 'rejected' });
    expect(ran).toEqual(['reserve']);
    expect(types(await runtime.history('late'))).toContain('TIMER_FIRED');
    expect(await stores.timers.forExecution('late')).toEqual([]);
  });

  test('a signal that beats the timeout removes the timer: it is consumed, not timed out', async () => {
    const { stores } = h.open();
    const { workflow } = approval(60_000);
    const runtime = h.runtime({ stores, workflows: [workflow], clock: () => T0 });
    await runtime.start(workflow, { gated: false }, { executionId: 'beat' });
    await until(async () => (await runtime.loadState('beat'))?.status === 'suspended');
    await runtime.signal('beat', 'approve', true);
    expect(await runtime.result('beat')).toBe('charged hold-1');
    expect(await stores.timers.forExecution('beat')).toEqual([]);
    const state = await runtime.loadState('beat');
    expect(state?.timers).toEqual([]);
  });

  test('after a restart, a signal through a fresh runtime wakes the waiting execution; nothing before the wait runs again', async () => {
    const backing = h.open();
    const { workflow, ran } = approval();
    const first = h.runtime({ stores: backing.stores, workflows: [workflow] });
    await first.start(workflow, { gated: false }, { executionId: 'restart' });
    await until(async () => (await first.loadState('restart'))?.status === 'suspended');
    await first.close();

    const restarted = h.runtime({ stores: backing.reopen(), workflows: [workflow] });
    await restarted.signal('restart', 'approve', true);
    expect(await restarted.result('restart')).toBe('charged hold-1');
    expect(ran).toEqual(['reserve', 'charge']);
  });

  test('a crash after SIGNAL_RECEIVED: replay returns the same payload, and the signal is never consumed twice', async () => {
    const { stores } = h.open();
    const used: unknown[] = [];
    const twice = defineWorkflow({
      name: 'twice',
      input: z.null(),
      signals: { n: z.number() },
      async run(ctx) {
        const a = await ctx.waitForSignal<number>('n');
        await ctx.step('use-a', () => used.push(a));
        const b = await ctx.waitForSignal<number>('n');
        return [a, b];
      },
    });
    // Appends: [STARTED, SUSPENDED], [RESUMED], [SIGNAL_RECEIVED, STEP_STARTED]; the next one dies.
    const doomed = h.runtime({
      stores: withEvents(stores, new CrashingEventStore(stores.events, 3)),
      workflows: [twice],
    });
    await doomed.start(twice, null, { executionId: 'twice' });
    await until(async () => (await doomed.loadState('twice'))?.status === 'suspended');
    const first = await doomed.signal('twice', 'n', 1);
    await until(async () => doomed.activeExecutions().length === 0);
    await doomed.close();
    expect(types(await readHistory(stores.events, 'twice')).at(-1)).toBe('STEP_STARTED');
    // The crashed run never deleted the consumed row: the inbox still holds it.
    expect((await stores.signals.pending('twice')).map((s) => s.signalId)).toEqual([first.signalId]);

    const runtime = h.runtime({ stores, workflows: [twice] });
    expect(await runtime.signal('twice', 'n', 1, { signalId: first.signalId })).toMatchObject({
      accepted: false,
      duplicate: true,
    });
    const second = await runtime.signal('twice', 'n', 2);
    const state = await runtime.execute({ executionId: 'twice', workflow: 'twice' });
    expect(state).toMatchObject({ status: 'completed', output: [1, 2] });
    expect(used).toEqual([1, 1]);
    const received = (await runtime.history('twice')).filter((e) => e.type === 'SIGNAL_RECEIVED');
    expect(received.map((e) => payloadOf<{ signalId: string }>(e).signalId)).toEqual([
      first.signalId,
      second.signalId,
    ]);
    expect(await stores.signals.pending('twice')).toEqual([]);
  });

  test('a signal landing between the wait’s inbox read and EXECUTION_SUSPENDED is not lost: the run re-checks after suspending', async () => {
    const { stores } = h.open();
    const { workflow } = approval();
    const late: SignalStore = {
      send: (signal, options) => stores.signals.send(signal, options),
      complete: (executionId, id) => stores.signals.complete(executionId, id),
      clear: (executionId) => stores.signals.clear(executionId),
      // The wait reads an empty inbox; the signal lands right after, and no sender wakes anyone.
      pending: async (executionId, query) => {
        const seen = await stores.signals.pending(executionId, query);
        if (seen.length === 0)
          await stores.signals.send({
            signalId: 'raced',
            executionId,
            name: 'approve',
            payload: 'true',
            sentAt: T0,
          });
        return seen;
      },
    };
    const runtime = h.runtime({ stores: { ...stores, signals: late }, workflows: [workflow] });
    const handle = await runtime.start(workflow, { gated: false }, { executionId: 'race' });
    expect(await handle.result()).toBe('charged hold-1');
    const log = await runtime.history('race');
    expect(types(log)).toContain('EXECUTION_SUSPENDED');
    const resumed = log.find((e) => e.type === 'EXECUTION_RESUMED');
    expect(payloadOf<{ reason: string }>(resumed).reason).toMatch(/while it suspended/);
  });
});
