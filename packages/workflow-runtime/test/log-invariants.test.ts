/**
 * docs/architecture.md#invariants, L1–L7, observed after real workflow runs: the log a runtime writes is dense,
 * starts once, carries fences, ends at its terminal event, and refuses bad values before
 * writing anything.
 */
import {
  defineWorkflow,
  type Envelope,
  ExecutionAlreadyExistsError,
  ExecutionFailedError,
  InvalidInputError,
  PayloadTooLargeError,
  SerializationError,
  StepFailedError,
  UnknownWorkflowError,
} from '@skein/workflow-runtime';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { backings, deferred, harness, payloadOf, types, untilLogHas } from './support/stores.js';

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

function expectDenseLog(log: readonly Envelope[], executionId: string): void {
  expect(log.map((event) => event.seq)).toEqual(log.map((_, i) => i));
  expect(log.every((event) => event.executionId === executionId)).toBe(true);
  expect(log[0]?.type).toBe('EXECUTION_STARTED');
  expect(types(log).filter((type) => type === 'EXECUTION_STARTED')).toHaveLength(1);
  expect(new Set(log.map((event) => event.envelopeId)).size).toBe(log.length);
  for (const event of log) {
    expect(event.envelopeId).toMatch(ULID);
    expect(Number.isSafeInteger(event.fence) && event.fence >= 0).toBe(true);
    expect(event.recordedAt).toBeInstanceOf(Date);
  }
}

describe.each(backings)('log invariants (%s store)', (_, open) => {
  const h = harness(open);

  const order = defineWorkflow({
    name: 'order',
    input: z.object({ sku: z.string(), qty: z.number().int().positive() }),
    async run(ctx, input) {
      const hold = await ctx.step('reserve', () => `hold-${input.sku}`);
      const at = ctx.now();
      const charge = await ctx.step('charge', () => input.qty * 100);
      return { hold, charge, at };
    },
  });

  test('L1/L2: the log is dense from seq 0, which is EXECUTION_STARTED, once', async () => {
    const { stores } = h.open();
    const runtime = h.runtime({ stores, workflows: [order] });
    const handle = await runtime.start(order, { sku: 'a', qty: 2 }, { executionId: 'order-1' });
    const output = await handle.result();
    expect(output).toMatchObject({ hold: 'hold-a', charge: 200 });

    const log = await runtime.history('order-1');
    expectDenseLog(log, 'order-1');
    expect(types(log)).toEqual([
      'EXECUTION_STARTED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'STEP_COMPLETED', // ctx.now(), recorded
      'STEP_STARTED',
      'STEP_COMPLETED',
      'EXECUTION_COMPLETED',
    ]);
    expect(log[0]?.payload).toEqual({ workflow: 'order', version: 1, input: { sku: 'a', qty: 2 } });
    expect(log.at(-1)?.payload).toEqual({ output });
    const state = await runtime.loadState('order-1');
    expect(state?.status).toBe('completed');
    expect(state?.sequence).toBe(log.length - 1);
  });

  test('L3: every event carries its writer fence, and a takeover writes under a larger one', async () => {
    const { stores } = h.open();
    const gate = deferred();
    const held = defineWorkflow({
      name: 'held',
      input: z.null(),
      async run(ctx) {
        await ctx.step('first', () => 1);
        return ctx.step('gated', () => gate.promise.then(() => 2));
      },
    });
    const a = h.runtime({ stores, workflows: [held] });
    const b = h.runtime({ stores, workflows: [held] });
    await a.start(held, null, { executionId: 'held-1' });
    // Wait until A is inside the gated step, then take over from B.
    await untilLogHas(a, 'held-1', 'STEP_STARTED', 2);
    const takeover = b.execute({ executionId: 'held-1', workflow: 'held', input: null });
    await untilLogHas(b, 'held-1', 'EXECUTION_RECOVERED', 1);
    gate.resolve();
    expect((await takeover).status).toBe('completed');

    const log = await b.history('held-1');
    expectDenseLog(log, 'held-1');
    const recovered = log.findIndex((event) => event.type === 'EXECUTION_RECOVERED');
    const before = log.slice(0, recovered);
    const after = log.slice(recovered);
    expect(new Set(before.map((event) => event.fence)).size).toBe(1);
    expect(new Set(after.map((event) => event.fence)).size).toBe(1);
    const [oldFence, newFence] = [before[0]?.fence ?? -1, after[0]?.fence ?? -1];
    expect(newFence).toBeGreaterThan(oldFence);
    expect(after[0]?.payload).toMatchObject({ fence: newFence });
    expect(await stores.events.currentFence('held-1')).toBe(newFence);
  });

  test('L6: executing a completed execution again writes nothing (lost-response idempotency)', async () => {
    const { stores } = h.open();
    const runtime = h.runtime({ stores, workflows: [order] });
    await (await runtime.start(order, { sku: 'b', qty: 1 }, { executionId: 'order-2' })).result();
    const before = await runtime.history('order-2');
    const fenceBefore = await stores.events.currentFence('order-2');

    const again = h.runtime({ stores, workflows: [order] });
    const state = await again.execute({
      executionId: 'order-2',
      workflow: 'order',
      input: { sku: 'b', qty: 1 },
    });
    const restarted = await again.start(order, { sku: 'b', qty: 1 }, { executionId: 'order-2' });

    expect(state.status).toBe('completed');
    expect(before.at(-1)?.payload).toEqual({ output: state.output });
    expect(await restarted.result()).toEqual(state.output);
    const after = await runtime.history('order-2');
    expect(after.map((event) => event.envelopeId)).toEqual(before.map((event) => event.envelopeId));
    expect(after.at(-1)?.type).toBe('EXECUTION_COMPLETED');
    expect(await stores.events.currentFence('order-2')).toBe(fenceBefore);
  });

  test('L6: a failed execution is terminal too: execute again writes nothing', async () => {
    const { stores } = h.open();
    const failing = defineWorkflow({
      name: 'failing',
      input: z.null(),
      async run(ctx) {
        await ctx.step('boom', () => {
          throw new Error('boom');
        });
      },
    });
    const runtime = h.runtime({ stores, workflows: [failing] });
    await expect(
      (await runtime.start(failing, null, { executionId: 'f-1' })).result(),
    ).rejects.toBeInstanceOf(ExecutionFailedError);
    const before = await runtime.history('f-1');
    expect(before.at(-1)?.type).toBe('EXECUTION_FAILED');
    const state = await runtime.execute({ executionId: 'f-1', workflow: 'failing', input: null });
    expect(state.status).toBe('failed');
    expect((await runtime.history('f-1')).map((e) => e.envelopeId)).toEqual(before.map((e) => e.envelopeId));
  });

  describe('L7: a refused start writes nothing, not even a fence', () => {
    async function expectNothingWritten(
      backing: ReturnType<typeof h.open>,
      executionId: string,
    ): Promise<void> {
      expect(await backing.stores.events.getExecution(executionId)).toBeNull();
      expect(await backing.stores.events.read(executionId, 0)).toEqual([]);
      expect(await backing.stores.events.currentFence(executionId)).toBe(0);
      expect((await backing.stores.events.listExecutions()).items).toEqual([]);
    }

    test('invalid input (zod) is refused naming each bad field', async () => {
      const backing = h.open();
      const runtime = h.runtime({ stores: backing.stores, workflows: [order] });
      const refused = runtime.start(order, { sku: 7, qty: -1 } as never, { executionId: 'bad-input' });
      await expect(refused).rejects.toBeInstanceOf(InvalidInputError);
      await expect(refused).rejects.toThrow(/input\.sku/);
      await expect(refused).rejects.toThrow(/input\.qty/);
      const viaExecute = runtime.execute({
        executionId: 'bad-input',
        workflow: 'order',
        input: { sku: 'a' },
      });
      await expect(viaExecute).rejects.toThrow(/input\.qty/);
      await expectNothingWritten(backing, 'bad-input');
      expect(await runtime.history('bad-input')).toEqual([]);
      expect(await runtime.loadState('bad-input')).toBeNull();
    });

    test('an unknown workflow is refused naming it and what is registered', async () => {
      const backing = h.open();
      const runtime = h.runtime({ stores: backing.stores, workflows: [order] });
      const viaExecute = runtime.execute({ executionId: 'unknown', workflow: 'shipping', input: {} });
      await expect(viaExecute).rejects.toBeInstanceOf(UnknownWorkflowError);
      await expect(viaExecute).rejects.toThrow(/"shipping".*order@1/);
      const stranger = defineWorkflow({ name: 'stranger', input: z.null(), run: async () => 1 });
      await expect(runtime.start(stranger, null, { executionId: 'unknown' })).rejects.toBeInstanceOf(
        UnknownWorkflowError,
      );
      await expectNothingWritten(backing, 'unknown');
    });

    test('an input payload over maxPayloadBytes is refused with its size and the limit', async () => {
      const backing = h.open();
      const runtime = h.runtime({ stores: backing.stores, workflows: [order], maxPayloadBytes: 256 });
      const refused = runtime.start(order, { sku: 'x'.repeat(1000), qty: 1 }, { executionId: 'big-input' });
      await expect(refused).rejects.toBeInstanceOf(PayloadTooLargeError);
      await expect(refused).rejects.toThrow(
        /input of workflow "order" is \d+ bytes encoded, over the limit of 256/,
      );
      await expectNothingWritten(backing, 'big-input');
    });

    test('a non-serializable input is refused naming its path', async () => {
      const backing = h.open();
      const loose = defineWorkflow({ name: 'loose', input: z.any(), run: async () => 1 });
      const runtime = h.runtime({ stores: backing.stores, workflows: [loose] });
      const refused = runtime.start(loose, { callback: () => 1 }, { executionId: 'fn-input' });
      await expect(refused).rejects.toBeInstanceOf(SerializationError);
      await expect(refused).rejects.toThrow(/\$\.input\.callback/);
      await expectNothingWritten(backing, 'fn-input');
    });
  });

  describe('L7: a step output the log cannot hold is never written; the step fails without retry', () => {
    function catching(name: string, produce: () => unknown) {
      let attempts = 0;
      const workflow = defineWorkflow({
        name,
        input: z.null(),
        async run(ctx) {
          try {
            await ctx.step(
              'produce',
              () => {
                attempts += 1;
                return produce();
              },
              { retry: { maxAttempts: 5, initialMs: 1 } },
            );
            return 'not reached';
          } catch (error) {
            expect(error).toBeInstanceOf(StepFailedError);
            const cause = (error as StepFailedError).cause as Error;
            return { error: (error as Error).message, cause: cause.name, causeMessage: cause.message };
          }
        },
      });
      return { workflow, attempts: () => attempts };
    }

    function expectNoOutputRecorded(log: readonly Envelope[]): void {
      expect(
        log.filter((e) => e.type === 'STEP_COMPLETED' && (e.payload as { name: string }).name === 'produce'),
      ).toEqual([]);
      expect(types(log)).toEqual(['EXECUTION_STARTED', 'STEP_STARTED', 'STEP_FAILED', 'EXECUTION_COMPLETED']);
      const failed = log[2]?.payload as { attempt: number; retryAt?: number };
      expect(failed.attempt).toBe(1);
      expect(failed.retryAt).toBeUndefined();
    }

    test('a non-serializable output: StepFailedError caused by SerializationError naming the path', async () => {
      const { stores } = h.open();
      const { workflow, attempts } = catching('fn-output', () => ({
        ok: true,
        cb: () => 1,
      }));
      const runtime = h.runtime({ stores, workflows: [workflow] });
      const output = await (await runtime.start(workflow, null, { executionId: 'fn-output' })).result();
      expect(output).toEqual({
        error: expect.stringMatching(/step "produce" failed after 1 attempt: value at \$\.output\.cb/),
        cause: 'SerializationError',
        causeMessage: expect.stringMatching(/function/),
      });
      expect(attempts()).toBe(1);
      expectNoOutputRecorded(await runtime.history('fn-output'));
    });

    test('an oversized output: StepFailedError caused by PayloadTooLargeError naming the step', async () => {
      const { stores } = h.open();
      const { workflow, attempts } = catching('big-output', () => 'x'.repeat(5_000));
      const runtime = h.runtime({ stores, workflows: [workflow], maxPayloadBytes: 1_000 });
      const output = await (await runtime.start(workflow, null, { executionId: 'big-output' })).result();
      expect(output).toEqual({
        error: expect.stringMatching(/step "produce" failed after 1 attempt/),
        cause: 'PayloadTooLargeError',
        causeMessage: expect.stringMatching(
          /output of step "produce" is \d+ bytes encoded, over the limit of 1000/,
        ),
      });
      expect(attempts()).toBe(1);
      const log = await runtime.history('big-output');
      expectNoOutputRecorded(log);
      expect(log.every((event) => JSON.stringify(event.payload).length < 1_000)).toBe(true);
    });

    test('uncaught, the refused output fails the execution and nothing follows EXECUTION_FAILED', async () => {
      const { stores } = h.open();
      const careless = defineWorkflow({
        name: 'careless',
        input: z.null(),
        // @ts-expect-error: a symbol is not recordable; an untyped caller meets the codec's refusal
        run: (ctx) => ctx.step('produce', () => Symbol('not data')),
      });
      const runtime = h.runtime({ stores, workflows: [careless] });
      const handle = await runtime.start(careless, null, { executionId: 'careless' });
      const failure = await handle.result().catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(ExecutionFailedError);
      expect((failure as Error).message).toMatch(/step "produce" failed/);
      const log = await runtime.history('careless');
      expect(types(log)).toEqual(['EXECUTION_STARTED', 'STEP_STARTED', 'STEP_FAILED', 'EXECUTION_FAILED']);
      expect(payloadOf<{ error: Error }>(log[2]).error.name).toBe('SerializationError');
    });
  });

  describe('L7: a workflow output the log cannot hold fails the execution; EXECUTION_COMPLETED is never written', () => {
    test.each([
      [
        'oversized',
        () => 'y'.repeat(5_000),
        'PayloadTooLargeError',
        /workflow output is \d+ bytes encoded, over the limit of 1000/,
      ],
      [
        'non-serializable',
        () => ({ at: new URL('https://example.com') }),
        'SerializationError',
        /\$\.at.*URL/,
      ],
    ] as const)('%s output', async (_kind, produce, errorName, message) => {
      const { stores } = h.open();
      const greedy = defineWorkflow({ name: 'greedy', input: z.null(), run: async () => produce() });
      const runtime = h.runtime({ stores, workflows: [greedy], maxPayloadBytes: 1_000 });
      const failure = await (await runtime.start(greedy, null, { executionId: 'greedy' }))
        .result()
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(ExecutionFailedError);
      const log = await runtime.history('greedy');
      expect(types(log)).toEqual(['EXECUTION_STARTED', 'EXECUTION_FAILED']);
      const recorded = payloadOf<{ error: Error }>(log[1]).error;
      expect(recorded.name).toBe(errorName);
      expect(recorded.message).toMatch(message);
    });
  });

  describe('L2: racing starts', () => {
    test('N runtimes start one id at once: one EXECUTION_STARTED, the effect runs once, every caller gets the output', async () => {
      const backing = h.open();
      let effects = 0;
      const counted = defineWorkflow({
        name: 'counted',
        input: z.object({ n: z.number() }),
        async run(ctx, input) {
          const value = await ctx.step('effect', async () => {
            effects += 1;
            return input.n * 2;
          });
          return { value };
        },
      });
      const runtimes = Array.from({ length: 6 }, () =>
        h.runtime({ stores: backing.reopen(), workflows: [counted] }),
      );
      const handles = await Promise.all(
        runtimes.map((r) => r.start(counted, { n: 21 }, { executionId: 'race-1' })),
      );
      const outputs = await Promise.all(handles.map((handle) => handle.result()));

      expect(outputs).toEqual(runtimes.map(() => ({ value: 42 })));
      expect(effects).toBe(1);
      const log = await runtimes[0]!.history('race-1');
      expectDenseLog(log, 'race-1');
      expect(types(log)).toEqual([
        'EXECUTION_STARTED',
        'STEP_STARTED',
        'STEP_COMPLETED',
        'EXECUTION_COMPLETED',
      ]);
    });

    test('many ids raced at once: each has exactly one start and one effect', async () => {
      const backing = h.open();
      const effects = new Map<string, number>();
      const counted = defineWorkflow({
        name: 'counted',
        input: z.null(),
        async run(ctx) {
          await ctx.step('effect', () => {
            effects.set(ctx.executionId, (effects.get(ctx.executionId) ?? 0) + 1);
          });
          return ctx.executionId;
        },
      });
      const runtimes = Array.from({ length: 4 }, () =>
        h.runtime({ stores: backing.reopen(), workflows: [counted] }),
      );
      const ids = Array.from({ length: 10 }, (_, i) => `race-many-${i}`);
      const handles = await Promise.all(
        ids.flatMap((id) => runtimes.map((r) => r.start(counted, null, { executionId: id }))),
      );
      const outputs = await Promise.all(handles.map((handle) => handle.result()));
      expect(outputs).toEqual(ids.flatMap((id) => runtimes.map(() => id)));
      for (const id of ids) {
        expect(effects.get(id)).toBe(1);
        expect(types(await runtimes[0]!.history(id)).filter((t) => t === 'EXECUTION_STARTED')).toHaveLength(
          1,
        );
      }
    });

    test('racing starts of two workflows on one id: one wins, the other gets ExecutionAlreadyExistsError and runs nothing', async () => {
      const backing = h.open();
      const ran: string[] = [];
      const make = (name: string) =>
        defineWorkflow({
          name,
          input: z.null(),
          run: (ctx) => ctx.step('effect', () => ran.push(name)),
        });
      const [left, right] = [make('left'), make('right')];
      const a = h.runtime({ stores: backing.reopen(), workflows: [left, right] });
      const b = h.runtime({ stores: backing.reopen(), workflows: [left, right] });
      const outcomes = await Promise.allSettled([
        a.start(left, null, { executionId: 'contested' }),
        b.start(right, null, { executionId: 'contested' }),
      ]);
      const won = outcomes.findIndex((outcome) => outcome.status === 'fulfilled');
      const lost = outcomes.find((outcome) => outcome.status === 'rejected');
      expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
      expect(lost?.reason).toBeInstanceOf(ExecutionAlreadyExistsError);
      const winner = won === 0 ? 'left' : 'right';
      await a.result('contested');
      expect(ran).toEqual([winner]);
      const log = await a.history('contested');
      expect(payloadOf<{ workflow: string }>(log[0]).workflow).toBe(winner);
      expect(types(log).filter((t) => t === 'EXECUTION_STARTED')).toHaveLength(1);
    });

    test('starting an existing id of another workflow throws ExecutionAlreadyExistsError and writes nothing', async () => {
      const { stores } = h.open();
      const other = defineWorkflow({ name: 'other', input: z.null(), run: async () => 'other' });
      const runtime = h.runtime({ stores, workflows: [order, other] });
      await (await runtime.start(order, { sku: 'c', qty: 1 }, { executionId: 'taken' })).result();
      const before = await runtime.history('taken');

      const refused = runtime.start(other, null, { executionId: 'taken' });
      await expect(refused).rejects.toBeInstanceOf(ExecutionAlreadyExistsError);
      await expect(refused).rejects.toThrow(/"taken" already exists \(workflow "order"\)/);
      await expect(
        runtime.execute({ executionId: 'taken', workflow: 'other', input: null }),
      ).rejects.toBeInstanceOf(ExecutionAlreadyExistsError);
      expect((await runtime.history('taken')).map((e) => e.envelopeId)).toEqual(
        before.map((e) => e.envelopeId),
      );
    });
  });
});
