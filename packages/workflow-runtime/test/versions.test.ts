/**
 * docs/architecture.md#executing: each execution records its workflow version and replays with that version's
 * code; `ctx.patched('id')` lets new code branch without breaking executions that already
 * passed the branch point on old code.
 */
import {
  type AnyWorkflow,
  defineWorkflow,
  type Stores,
  UnknownWorkflowError,
  type WorkflowContext,
} from '@skein/workflow-runtime';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import type { Harness } from './support/stores.js';
import { backings, CrashingEventStore, harness, payloadOf, types, withEvents } from './support/stores.js';

async function crashAfter(h: Harness, stores: Stores, workflow: AnyWorkflow, id: string, appends: number) {
  const doomed = h.runtime({
    stores: withEvents(stores, new CrashingEventStore(stores.events, appends)),
    workflows: [workflow],
  });
  await expect(
    doomed.execute({ executionId: id, workflow: workflow.name, input: null, version: workflow.version }),
  ).rejects.toThrow(/simulated crash/);
  await doomed.close();
}

describe.each(backings)('versions and patches (%s store)', (_, open) => {
  const h = harness(open);

  function greeter() {
    const ran: string[] = [];
    const v1 = defineWorkflow({
      name: 'greet',
      version: 1,
      input: z.null(),
      async run(ctx) {
        const name = await ctx.step('lookup', () => {
          ran.push('v1:lookup');
          return 'ada';
        });
        const text = await ctx.step('format', () => {
          ran.push('v1:format');
          return `hello ${name}`;
        });
        return { version: ctx.version, text };
      },
    });
    const v2 = defineWorkflow({
      name: 'greet',
      version: 2,
      input: z.null(),
      async run(ctx) {
        const name = await ctx.step('lookup-v2', () => {
          ran.push('v2:lookup');
          return 'grace';
        });
        return { version: ctx.version, text: `hi ${name}` };
      },
    });
    return { v1, v2, ran };
  }

  test('each execution records the version it started with; execute defaults to the newest', async () => {
    const { stores } = h.open();
    const { v1, v2 } = greeter();
    const runtime = h.runtime({ stores, workflows: [v1, v2] });
    const onV1 = await (await runtime.start(v1, null, { executionId: 'on-v1' })).result();
    const onV2 = await (await runtime.start(v2, null, { executionId: 'on-v2' })).result();
    const newest = await runtime.execute({ executionId: 'newest', workflow: 'greet', input: null });
    const pinned = await runtime.execute({
      executionId: 'pinned',
      workflow: 'greet',
      input: null,
      version: 1,
    });

    expect(onV1).toEqual({ version: 1, text: 'hello ada' });
    expect(onV2).toEqual({ version: 2, text: 'hi grace' });
    expect(newest).toMatchObject({ version: 2, output: { version: 2 } });
    expect(pinned).toMatchObject({ version: 1, output: { version: 1 } });
    for (const [id, version] of [
      ['on-v1', 1],
      ['on-v2', 2],
      ['newest', 2],
      ['pinned', 1],
    ] as const) {
      const log = await runtime.history(id);
      expect(payloadOf<{ version: number }>(log[0]).version).toBe(version);
    }
  });

  test('an execution started on v1 recovers with v1 code after v2 is deployed', async () => {
    const { stores } = h.open();
    const { v1, v2, ran } = greeter();
    await crashAfter(h, stores, v1, 'old', 1);
    expect(ran).toEqual(['v1:lookup']);

    const upgraded = h.runtime({ stores, workflows: [v1, v2] });
    const state = await upgraded.execute({ executionId: 'old', workflow: 'greet', input: null });
    expect(state).toMatchObject({
      version: 1,
      status: 'completed',
      output: { version: 1, text: 'hello ada' },
    });
    expect(ran).toEqual(['v1:lookup', 'v1:lookup', 'v1:format']);
    expect(ran.some((entry) => entry.startsWith('v2'))).toBe(false);
  });

  test('an execution whose version is no longer registered is refused, not run on other code, and nothing is written', async () => {
    const { stores } = h.open();
    const { v1, v2, ran } = greeter();
    await crashAfter(h, stores, v1, 'orphan', 1);
    const before = await stores.events.read('orphan', 0);

    const onlyV2 = h.runtime({ stores, workflows: [v2] });
    const refused = onlyV2.execute({ executionId: 'orphan', workflow: 'greet', input: null });
    await expect(refused).rejects.toBeInstanceOf(UnknownWorkflowError);
    await expect(refused).rejects.toThrow(/"greet" version 1 is not registered \(registered: greet@2\)/);
    expect(await stores.events.read('orphan', 0)).toEqual(before);
    expect(ran).toEqual(['v1:lookup']);
  });

  describe('ctx.patched', () => {
    function shipping() {
      const ran: string[] = [];
      const step = (ctx: WorkflowContext, name: string) =>
        ctx.step(name, () => {
          ran.push(name);
          return name;
        });
      const before = defineWorkflow({
        name: 'ship',
        input: z.null(),
        async run(ctx) {
          const a = await step(ctx, 'pack');
          const b = await step(ctx, 'post');
          const c = await step(ctx, 'notify');
          return [a, b, c];
        },
      });
      const after = defineWorkflow({
        name: 'ship',
        input: z.null(),
        async run(ctx) {
          const a = await step(ctx, 'pack');
          const courier = ctx.patched('use-courier');
          const b = courier ? await step(ctx, 'courier') : await step(ctx, 'post');
          const c = await step(ctx, 'notify');
          return [a, b, c, courier];
        },
      });
      return { before, after, ran };
    }

    test('is true for a new execution, and the marker is in the log', async () => {
      const { stores } = h.open();
      const { after, ran } = shipping();
      const runtime = h.runtime({ stores, workflows: [after] });
      const output = await (await runtime.start(after, null, { executionId: 'new' })).result();
      expect(output).toEqual(['pack', 'courier', 'notify', true]);
      expect(ran).toEqual(['pack', 'courier', 'notify']);
      const markers = (await runtime.history('new')).filter(
        (e) => e.type === 'STEP_COMPLETED' && payloadOf<{ kind: string }>(e).kind === 'patch',
      );
      expect(markers.map((e) => payloadOf<{ name: string }>(e).name)).toEqual(['use-courier']);
    });

    test('is false for an execution that passed the point on old code, and its replay is not broken', async () => {
      const { stores } = h.open();
      const { before, after, ran } = shipping();
      // Old code got as far as "notify" (pack and post completed) when the process died.
      await crashAfter(h, stores, before, 'old', 3);
      expect(ran).toEqual(['pack', 'post', 'notify']);

      const patchedRuntime = h.runtime({ stores, workflows: [after] });
      const state = await patchedRuntime.execute({ executionId: 'old', workflow: 'ship', input: null });
      expect(state.status).toBe('completed');
      expect(state.output).toEqual(['pack', 'post', 'notify', false]);
      expect(ran).toEqual(['pack', 'post', 'notify', 'notify']);
      const log = await patchedRuntime.history('old');
      expect(log.some((e) => payloadOf<{ kind?: string }>(e).kind === 'patch')).toBe(false);
    });

    test('is true for an old execution that had not reached the point yet', async () => {
      const { stores } = h.open();
      const { before, after, ran } = shipping();
      // Old code was inside "pack" when the process died: it never decided between post and courier.
      await crashAfter(h, stores, before, 'early', 1);
      expect(ran).toEqual(['pack']);

      const patchedRuntime = h.runtime({ stores, workflows: [after] });
      const state = await patchedRuntime.execute({ executionId: 'early', workflow: 'ship', input: null });
      expect(state.output).toEqual(['pack', 'courier', 'notify', true]);
    });

    test('keeps its answer on replay of a patched execution', async () => {
      const { stores } = h.open();
      const { after, ran } = shipping();
      // New code recorded the marker and "courier" started before the process died.
      await crashAfter(h, stores, after, 'replayed', 2);
      expect(ran).toEqual(['pack', 'courier']);

      const runtime = h.runtime({ stores, workflows: [after] });
      const state = await runtime.execute({ executionId: 'replayed', workflow: 'ship', input: null });
      expect(state.output).toEqual(['pack', 'courier', 'notify', true]);
      expect(ran).toEqual(['pack', 'courier', 'courier', 'notify']);
      expect(
        types(await runtime.history('replayed')).filter((t) => t === 'EXECUTION_RECOVERED'),
      ).toHaveLength(1);
    });
  });
});
