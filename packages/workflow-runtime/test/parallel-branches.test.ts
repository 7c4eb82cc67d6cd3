/**
 * docs/workflows.md#parallel, adr/0031: a body that runs branches at once. A wait made while a
 * sibling is in flight suspends once the sibling has settled and recorded, and every outcome
 * reaches the body in the order of the event that settled it, so a replay takes the branches
 * the first run took.
 */
import { defineWorkflow, NonDeterminismError } from '@skein/workflow-runtime';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { backings, harness, types, until } from './support/stores.js';

const later = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(resolve, ms, value));

describe.each(backings)('parallel branches (%s store)', (_, open) => {
  const h = harness(open);

  test('15.1: a sleep made while a sibling step is in flight suspends once the step is recorded, then completes', async () => {
    const { stores } = h.open();
    const workflow = defineWorkflow({
      name: 'w',
      input: z.object({}),
      run: (ctx) => Promise.all([ctx.sleep('t', 50), ctx.step('slow', () => later(300, 'done'))]),
    });
    const runtime = h.runtime({ stores, workflows: [workflow] });
    const handle = await runtime.start(workflow, {}, { executionId: 'all-1' });
    expect(await handle.result()).toEqual([undefined, 'done']);
    const log = types(await runtime.history('all-1'));
    // The step's outcome is durable before the suspension, which the due timer ends at once.
    expect(log.indexOf('STEP_COMPLETED')).toBeLessThan(log.indexOf('EXECUTION_SUSPENDED'));
    expect(log.at(-1)).toBe('EXECUTION_COMPLETED');
    expect(h.backgroundErrors).toEqual([]);
  });

  test('15.1: a retry backoff, a signal wait and a child call made while a sibling runs all suspend and finish', async () => {
    const { stores } = h.open();
    let attempts = 0;
    const child = defineWorkflow({
      name: 'kid',
      input: z.null(),
      run: (ctx) => ctx.step('work', () => later(20, 'kid-done')),
    });
    const workflow = defineWorkflow({
      name: 'mixed',
      input: z.null(),
      signals: { go: z.string() },
      run: (ctx) =>
        Promise.all([
          ctx.step(
            'flaky',
            () => {
              attempts += 1;
              if (attempts === 1) throw new Error('first attempt fails');
              return 'flaky-done';
            },
            { retry: { maxAttempts: 2, initialMs: 10 } },
          ),
          ctx.waitForSignal<string>('go'),
          ctx.child(child, null),
          ctx.step('slow', () => later(200, 'slow-done')),
        ]),
    });
    const runtime = h.runtime({ stores, workflows: [workflow, child] });
    const handle = await runtime.start(workflow, null, { executionId: 'mixed-1' });
    await until(async () => (await handle.state())?.status === 'suspended');
    await runtime.signal('mixed-1', 'go', 'went');
    expect(await handle.result()).toEqual(['flaky-done', 'went', 'kid-done', 'slow-done']);
    expect(h.backgroundErrors).toEqual([]);
  });

  test('15.1: Promise.race takes the branch the first run took, also on replay', async () => {
    const { stores } = h.open();
    const workflow = defineWorkflow({
      name: 'race',
      input: z.null(),
      async run(ctx) {
        // The slow step has the first position; the fast one settles first.
        const winner = await Promise.race([
          ctx.step('slow', () => later(120, 'slow')),
          ctx.step('fast', () => later(5, 'fast')),
        ]);
        await ctx.sleep('pause', 30);
        const after = await ctx.step(`after-${winner}`, () => winner);
        return after;
      },
    });
    const runtime = h.runtime({ stores, workflows: [workflow] });
    const handle = await runtime.start(workflow, null, { executionId: 'race-1' });
    // The resume after the sleep replays both steps: it must still see 'fast' win.
    expect(await handle.result()).toBe('fast');
    const log = await runtime.history('race-1');
    expect(types(log)).toContain('EXECUTION_RESUMED');
    expect(h.backgroundErrors).toEqual([]);
  });

  test('15.1: branches that each make more calls after an outcome replay at the same positions', async () => {
    const { stores } = h.open();
    const ran: string[] = [];
    const branch = async (
      ctx: Parameters<Parameters<typeof defineWorkflow>[0]['run']>[0],
      name: string,
      ms: number,
    ) => {
      const first = await ctx.step(`${name}1`, () => later(ms, `${name}1`));
      // An extra await: the position of the next call must not depend on microtask depth.
      await Promise.resolve();
      const second = await ctx.step(`${name}2`, () => {
        ran.push(`${name}2`);
        return `${name}2`;
      });
      return [first, second];
    };
    const workflow = defineWorkflow({
      name: 'branches',
      input: z.null(),
      async run(ctx) {
        const both = await Promise.all([branch(ctx, 'a', 60), branch(ctx, 'b', 5)]);
        await ctx.sleep('pause', 20);
        return both;
      },
    });
    const runtime = h.runtime({ stores, workflows: [workflow] });
    const handle = await runtime.start(workflow, null, { executionId: 'branches-1' });
    expect(await handle.result()).toEqual([
      ['a1', 'a2'],
      ['b1', 'b2'],
    ]);
    expect(ran.sort()).toEqual(['a2', 'b2']);
    expect(h.backgroundErrors).toEqual([]);
  });

  test('15.1: a replay whose code no longer makes a call the log settled fails with NonDeterminismError', async () => {
    const { stores } = h.open();
    let changed = false;
    const workflow = defineWorkflow({
      name: 'drift',
      input: z.null(),
      async run(ctx) {
        if (changed) {
          // The changed code makes 'a' and then waits on nothing the log can settle.
          await ctx.step('a', () => 'a');
          return new Promise<never>(() => undefined);
        }
        const both = await Promise.all([ctx.step('a', () => 'a'), ctx.step('b', () => 'b')]);
        await ctx.sleep('pause', 30);
        return both;
      },
    });
    const runtime = h.runtime({ stores, workflows: [workflow] });
    await runtime.start(workflow, null, { executionId: 'drift-1' });
    await until(async () => (await runtime.loadState('drift-1'))?.status === 'suspended');
    await runtime.close();
    changed = true;
    const before = (await runtime.history('drift-1')).length;
    await new Promise((resolve) => setTimeout(resolve, 40));
    const restarted = h.runtime({ stores, workflows: [workflow] });
    const error = await restarted.wake('drift-1').catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(NonDeterminismError);
    expect((error as NonDeterminismError).position).toBe(1);
    // Nothing was written: the resume's append never happened.
    expect((await restarted.history('drift-1')).length).toBe(before);
  });
});
